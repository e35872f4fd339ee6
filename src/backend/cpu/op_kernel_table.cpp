#include "backend/cpu/ops/op_kernels.hpp"
#include "graph/op_def.hpp"

namespace telar::backend::cpu {

namespace {

// Indexed by KernelFamily.
#define TELAR_KERNEL_ENTRY(family) &op_kernel_defs::k##family,
constexpr const OpKernels* kTable[] = {TELAR_KERNEL_FAMILIES(TELAR_KERNEL_ENTRY)};
#undef TELAR_KERNEL_ENTRY

}  // namespace

const OpKernels& op_kernels(graph::OpKind kind) {
  return *kTable[static_cast<std::size_t>(graph::kernel_family(kind))];
}

}  // namespace telar::backend::cpu
