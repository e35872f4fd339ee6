// CrossEntropy, BCEWithLogits and MSE.
#include "backend/cuda/ops/op_kernels.hpp"

namespace telar::backend::cuda {

namespace {

using graph::OpKind;

void check_labels(std::string_view loss, const Tensor& labels, std::int64_t classes) {
  const std::int64_t* lp = labels.data<std::int64_t>();
  for (std::int64_t n = 0; n < labels.numel(); ++n)
    if (lp[n] < 0 || lp[n] >= classes)
      fail("{}: label {} of sample {} is out of range for {} classes; labels must be in [0, {})",
           loss, lp[n], n, classes, classes);
}

class Loss final : public Kernel {
 public:
  explicit Loss(KernelIO io) : Kernel(std::move(io)) { define_output(); }
  void forward(bool, std::uint64_t) override {
    const Slot& x = in(0);
    const Slot& t = in(1);
    switch (node().kind) {
      case OpKind::CrossEntropy:
        if (t.host) check_labels("CrossEntropy", *t.host, x.shape.at(1));
        kernels::cross_entropy_forward(stream(), x.f32(), t.i64(), out().f32(), x.shape.at(0),
                                       x.shape.at(1));
        break;
      case OpKind::BCEWithLogits:
        kernels::bce_forward(stream(), x.f32(), t.f32(), out().f32(), x.numel);
        break;
      default:
        if (t.dtype == DType::I64) {
          if (t.host) check_labels("MSE", *t.host, x.shape.at(1));
          kernels::mse_forward(stream(), x.f32(), nullptr, t.i64(), out().f32(), x.numel,
                               x.shape.at(1));
        } else {
          kernels::mse_forward(stream(), x.f32(), t.f32(), nullptr, out().f32(), x.numel, 1);
        }
    }
    check_launch("loss forward");
  }
  void backward() override {
    if (!grad_of(0)) return;
    const Slot& x = in(0);
    const Slot& t = in(1);
    switch (node().kind) {
      case OpKind::CrossEntropy:
        kernels::cross_entropy_backward(stream(), x.f32(), t.i64(), out().grad, grad_of(0),
                                        x.shape.at(0), x.shape.at(1));
        break;
      case OpKind::BCEWithLogits:
        kernels::bce_backward(stream(), x.f32(), t.f32(), out().grad, grad_of(0), x.numel);
        break;
      default:
        if (t.dtype == DType::I64)
          kernels::mse_backward(stream(), x.f32(), nullptr, t.i64(), out().grad, grad_of(0),
                                x.numel, x.shape.at(1));
        else
          kernels::mse_backward(stream(), x.f32(), t.f32(), nullptr, out().grad, grad_of(0),
                                x.numel, 1);
    }
    check_launch("loss backward");
  }
};

}  // namespace

const OpKernels op_kernel_defs::kLoss{kernel_of<Loss>};

}  // namespace telar::backend::cuda
