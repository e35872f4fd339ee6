// CrossEntropy, BCEWithLogits and MSE (reference kernels only): the loss forward, and its
// gradient scaled by the output gradient in backward.
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

using graph::OpKind;

class RefLoss final : public Kernel {
 public:
  explicit RefLoss(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override { out().data.f32()[0] = compute(nullptr, 1.0f); }
  void backward() override {
    if (grad_of(0).tensor) compute(grad_of(0).tensor, out().grad.f32()[0]);
    if (grad_of(1).tensor) grad_of(1).tensor->zero();  // the target is not differentiated
  }

 private:
  float compute(Tensor* dinput, float scale) {
    switch (node().kind) {
      case OpKind::CrossEntropy:
        return ops::cross_entropy_with_logits(in(0).data, in(1).data, dinput, scale);
      case OpKind::BCEWithLogits: return ops::bce_with_logits(in(0).data, in(1).data, dinput, scale);
      default: return ops::mse(in(0).data, in(1).data, dinput, scale);
    }
  }
};

}  // namespace

const OpKernels op_kernel_defs::kLoss{nullptr, reference_kernel<RefLoss>};

}  // namespace telar::backend::cpu
