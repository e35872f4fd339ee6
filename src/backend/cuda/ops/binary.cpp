// Add of two tensors of one shape (residual connections); Sub, Mul, Div and broadcasting have
// no CUDA kernel yet.
#include "backend/cuda/ops/op_kernels.hpp"

namespace telar::backend::cuda {

namespace {

class Add final : public Kernel {
 public:
  explicit Add(KernelIO io) : Kernel(std::move(io)) {
    if (node().kind != graph::OpKind::Add) no_cuda_kernel(node());
    if (in(0).shape != in(1).shape) no_cuda_kernel(node(), "broadcasting");
    define_output();
  }
  void forward(bool, std::uint64_t) override {
    kernels::add(stream(), in(0).f32(), in(1).f32(), out().f32(), out().numel);
    check_launch("add forward");
  }
  void backward() override {
    for (std::size_t i = 0; i < 2; ++i)
      if (grad_of(i)) kernels::copy(stream(), grad_of(i), out().grad, out().numel);
    check_launch("add backward");
  }
};

}  // namespace

const OpKernels op_kernel_defs::kBinary{kernel_of<Add>};

}  // namespace telar::backend::cuda
