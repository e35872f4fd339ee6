// Add (residual connections).
#include "backend/cuda/ops/op_kernels.hpp"

namespace telar::backend::cuda {

namespace {

class Add final : public Kernel {
 public:
  explicit Add(KernelIO io) : Kernel(std::move(io)) { define_output(); }
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

const OpKernels op_kernel_defs::kAdd{kernel_of<Add>};

}  // namespace telar::backend::cuda
