// Pad on the reference kernel (plain layouts).
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

class RefPad final : public Kernel {
 public:
  explicit RefPad(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override {
    ops::pad_forward(node().attr<graph::PadAttrs>(), in(0).data, out().data);
  }
  void backward() override {
    if (grad_of(0).tensor)
      ops::pad_backward(node().attr<graph::PadAttrs>(), out().grad, *grad_of(0).tensor);
  }
};

}  // namespace

const OpKernels op_kernel_defs::kPad{nullptr, reference_kernel<RefPad>};

}  // namespace telar::backend::cpu
