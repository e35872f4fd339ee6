// ReLU, ReLU6, Sigmoid and Tanh on the kernels of kernels.cu (LeakyReLU, HardSigmoid,
// HardSwish, SiLU, GELU, Sqrt, Erf and Pow have no CUDA kernel yet).
#include "backend/cuda/ops/op_kernels.hpp"

namespace telar::backend::cuda {

namespace {

class Activation final : public Kernel {
 public:
  explicit Activation(KernelIO io) : Kernel(std::move(io)), kind_(kernel_kind(node().kind)) {
    if (kind_ < 0) no_cuda_kernel(node());
    define_output();
  }
  void forward(bool, std::uint64_t) override {
    kernels::activation_forward(stream(), kind_, in(0).f32(), out().f32(), out().numel);
    check_launch("activation forward");
  }
  void backward() override {
    if (!grad_of(0)) return;
    kernels::activation_backward(stream(), kind_, in(0).f32(), out().f32(), out().grad, grad_of(0),
                                 out().numel);
    check_launch("activation backward");
  }

 private:
  // kernels.hpp's numbering (ops::Activation's order).
  static int kernel_kind(graph::OpKind kind) {
    switch (kind) {
      case graph::OpKind::ReLU: return 0;
      case graph::OpKind::ReLU6: return 1;
      case graph::OpKind::Sigmoid: return 2;
      case graph::OpKind::Tanh: return 3;
      default: return -1;
    }
  }
  int kind_;
};

}  // namespace

const OpKernels op_kernel_defs::kActivation{kernel_of<Activation>};

}  // namespace telar::backend::cuda
