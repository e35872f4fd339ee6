#pragma once
// How the CUDA backend runs each op: one file per op in this folder (cuBLAS for Linear, cuDNN's
// legacy API, still in cuDNN 9, for convolution, batch norm, average pooling and softmax, the
// hand-written kernels of kernels.cu for the rest; semantics follow the reference kernels in
// src/ops), gathered by op_kernel_table.cpp into a table indexed by OpKind and checked at
// compile time to cover every kind. Here: what those files share.
#include <fmt/format.h>

#include <limits>
#include <memory>
#include <string_view>
#include <type_traits>

#include "backend/cuda/kernels.hpp"
#include "backend/cuda/plan.hpp"
#include "core/error.hpp"

// The legacy cuDNN entry points are marked deprecated in cuDNN 9 but remain supported; the
// graph API would buy nothing for these single-op calls.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace telar::backend::cuda {

struct OpKernels {
  std::unique_ptr<Kernel> (*make)(KernelIO io) = nullptr;
};

template <typename K> std::unique_ptr<Kernel> kernel_of(KernelIO io) {
  return std::make_unique<K>(std::move(io));
}

// One kernel set per kernel family (graph/op.hpp), defined in ops/<op>.cpp.
namespace op_kernel_defs {
TELAR_KERNEL_FAMILIES(TELAR_DECLARE_KERNEL_FAMILY)
}

// For a node this backend has no kernel for (yet): one error naming it, at plan time.
[[noreturn]] inline void no_cuda_kernel(const graph::Node& node, std::string_view what = "this op") {
  fail("node '{}' ({}): the CUDA backend has no kernel for {} yet; run the model with --backend "
       "cpu",
       node.name, graph::op_name(node.kind), what);
}
inline std::unique_ptr<Kernel> no_kernel(KernelIO io) { no_cuda_kernel(*io.node); }

inline constexpr float kOne = 1.0f, kZero = 0.0f;

inline int to_int(std::int64_t v, std::string_view what) {
  if (v < 0 || v > std::numeric_limits<int>::max())
    fail("CUDA backend: {} = {} does not fit the 32-bit sizes cuBLAS/cuDNN take", what, v);
  return static_cast<int>(v);
}

// Status checks that name the node (formatting only on failure).
template <typename Status>
void ok(Status status, const graph::Node& node, std::string_view call) {
  bool success;
  if constexpr (std::is_same_v<Status, cudnnStatus_t>)
    success = status == CUDNN_STATUS_SUCCESS;
  else if constexpr (std::is_same_v<Status, cublasStatus_t>)
    success = status == CUBLAS_STATUS_SUCCESS;
  else
    success = status == cudaSuccess;
  if (!success)
    check(status, fmt::format("node '{}' ({}): {}", node.name, graph::op_name(node.kind), call));
}

class TensorDesc {
 public:
  TensorDesc() { check(cudnnCreateTensorDescriptor(&d_), "cudnnCreateTensorDescriptor"); }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d_); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
  void set(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
    check(cudnnSetTensor4dDescriptor(d_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, to_int(n, "N"),
                                     to_int(c, "C"), to_int(h, "H"), to_int(w, "W")),
          "cudnnSetTensor4dDescriptor");
  }
  void set(const Shape& s) {
    set(s.at(0), s.at(1), s.size() > 2 ? s[2] : 1, s.size() > 3 ? s[3] : 1);
  }
  cudnnTensorDescriptor_t get() const { return d_; }

 private:
  cudnnTensorDescriptor_t d_ = nullptr;
};

}  // namespace telar::backend::cuda
