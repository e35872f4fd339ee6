// DLRM's dot interaction (reference kernel only).
#include <vector>

#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

class RefDotInteraction final : public Kernel {
 public:
  explicit RefDotInteraction(KernelIO io) : Kernel(std::move(io)) {
    define_plain_output();
    inputs_.resize(io_.inputs.size());
    grads_.resize(io_.inputs.size());
  }
  void forward(bool, std::uint64_t) override {
    for (std::size_t i = 0; i < inputs_.size(); ++i) inputs_[i] = in(i).data;
    ops::dot_interaction_forward(node().attr<graph::DotInteractionAttrs>(), inputs_, out().data);
  }
  void prepare_backward() override {
    for (std::size_t i = 0; i < grads_.size(); ++i)
      grads_[i] = grad_of(i).tensor ? *grad_of(i).tensor : Tensor(in(i).shape);
  }
  void backward() override {
    ops::dot_interaction_backward(node().attr<graph::DotInteractionAttrs>(), inputs_, out().grad,
                                  grads_);
  }

 private:
  std::vector<Tensor> inputs_, grads_;
};

}  // namespace

const OpKernels op_kernel_defs::kDotInteraction{nullptr, reference_kernel<RefDotInteraction>};

}  // namespace telar::backend::cpu
