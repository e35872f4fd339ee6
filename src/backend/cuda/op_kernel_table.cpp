#include "backend/cuda/ops/op_kernels.hpp"
#include "graph/op_def.hpp"

namespace telar::backend::cuda {

namespace {

// Indexed by KernelFamily.
#define TELAR_KERNEL_ENTRY(family) &op_kernel_defs::k##family,
constexpr const OpKernels* kTable[] = {TELAR_KERNEL_FAMILIES(TELAR_KERNEL_ENTRY)};
#undef TELAR_KERNEL_ENTRY

}  // namespace

std::unique_ptr<Kernel> make_kernel(KernelIO io) {
  return kTable[static_cast<std::size_t>(graph::kernel_family(io.node->kind))]->make(std::move(io));
}

}  // namespace telar::backend::cuda
