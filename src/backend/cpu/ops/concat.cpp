// Concat along the channel axis (reference kernel only).
#include <vector>

#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

class RefConcat final : public Kernel {
 public:
  explicit RefConcat(KernelIO io) : Kernel(std::move(io)) {
    define_plain_output();
    inputs_.resize(io_.inputs.size());
    grads_.resize(io_.inputs.size());
  }
  void forward(bool, std::uint64_t) override {
    for (std::size_t i = 0; i < inputs_.size(); ++i) inputs_[i] = in(i).data;
    ops::concat_forward(inputs_, out().data);
  }
  void prepare_backward() override {
    needed_ = false;
    for (std::size_t i = 0; i < grads_.size(); ++i) {
      needed_ = needed_ || grad_of(i).tensor;
      grads_[i] = grad_of(i).tensor ? *grad_of(i).tensor : Tensor(in(i).shape);
    }
  }
  // Nothing to do where no input wants a gradient (a concatenation of the model's input).
  void backward() override {
    if (needed_) ops::concat_backward(out().grad, grads_);
  }

 private:
  std::vector<Tensor> inputs_, grads_;
  bool needed_ = false;
};

}  // namespace

const OpKernels op_kernel_defs::kConcat{nullptr, reference_kernel<RefConcat>};

}  // namespace telar::backend::cpu
