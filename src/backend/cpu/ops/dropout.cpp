// Dropout (reference kernel only): the mask drawn from the node's random stream.
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

class RefDropout final : public Kernel {
 public:
  explicit RefDropout(KernelIO io) : Kernel(std::move(io)) {
    define_plain_output();
    mask_ = Tensor(out().shape, DType::U8);
  }
  void forward(bool training, std::uint64_t stream) override {
    const float p = node().attr<graph::DropoutAttrs>().p;
    if (!training || p == 0.0f) {
      out().data.copy_from(in(0).data);
      mask_valid_ = false;
      return;
    }
    Rng rng = Rng::derive(io_.seed, stream);
    ops::dropout_forward(p, rng, in(0).data, out().data, mask_);
    mask_valid_ = true;
  }
  void backward() override {
    if (!grad_of(0).tensor) return;
    if (mask_valid_)
      ops::dropout_backward(node().attr<graph::DropoutAttrs>().p, mask_, out().grad,
                            *grad_of(0).tensor);
    else
      grad_of(0).tensor->copy_from(out().grad);
  }

 private:
  Tensor mask_;
  bool mask_valid_ = false;
};

}  // namespace

const OpKernels op_kernel_defs::kDropout{nullptr, reference_kernel<RefDropout>};

}  // namespace telar::backend::cpu
