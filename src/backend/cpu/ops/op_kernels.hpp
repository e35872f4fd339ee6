#pragma once
// How the CPU backend runs each op: its kernels in order of preference, one file per op in
// this folder (the oneDNN or native kernel first, then the portable reference kernel over ops/),
// gathered by op_kernel_table.cpp into a table indexed by OpKind and checked at compile time to
// cover every kind.
#include <memory>

#include "backend/cpu/dnnl_kernel.hpp"
#include "backend/cpu/kernel.hpp"
#include "ops/kernels.hpp"

namespace telar::backend::cpu {

struct OpKernels {
  // The fast kernel (oneDNN, or native) for this node, or nullptr where it has none for this
  // node; it sets its output's layout and may ask for its inputs in others (LayoutConverter).
  // A null function: the op has only its reference kernel.
  std::unique_ptr<Kernel> (*fast)(KernelIO io, LayoutConverter& converter) = nullptr;
  // The reference kernel: every op has one; its inputs arrive in plain layouts.
  std::unique_ptr<Kernel> (*reference)(KernelIO io) = nullptr;
  // Precision::INT8: the fast kernel reads int8 inputs (and sets its output's encoding); the
  // plan gives other kernels fp32 inputs.
  bool int8 = false;
  // Whether the kernels' backward reads the node's output (false: only inputs, weights and
  // their own workspaces), so that a training plan may let the output's only reader write over
  // it (Slot::overwritable).
  bool backward_reads_output = true;
};

const OpKernels& op_kernels(graph::OpKind kind);

template <typename K>
std::unique_ptr<Kernel> fast_kernel(KernelIO io, LayoutConverter& converter) {
  return std::make_unique<K>(std::move(io), converter);
}
template <typename K> std::unique_ptr<Kernel> reference_kernel(KernelIO io) {
  return std::make_unique<K>(std::move(io));
}

// One kernel set per kernel family (graph/op.hpp), defined in ops/<op>.cpp.
namespace op_kernel_defs {
TELAR_KERNEL_FAMILIES(TELAR_DECLARE_KERNEL_FAMILY)
}

}  // namespace telar::backend::cpu
