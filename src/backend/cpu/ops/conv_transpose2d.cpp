// ConvTranspose2d on the reference kernel (plain layouts; ops/conv_transpose2d.cpp).
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

class RefConvTranspose2d final : public Kernel {
 public:
  explicit RefConvTranspose2d(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override {
    const auto& a = node().attr<graph::ConvTranspose2dAttrs>();
    ops::conv_transpose2d_forward(a, in(0).data, in(1).data, a.bias ? &in(2).data : nullptr,
                                  out().data);
  }
  void backward() override {
    const auto& a = node().attr<graph::ConvTranspose2dAttrs>();
    ops::conv_transpose2d_backward(a, in(0).data, in(1).data, out().grad, grad_of(0).tensor,
                                   grad_of(1).tensor, a.bias ? grad_of(2).tensor : nullptr);
  }
};

}  // namespace

const OpKernels op_kernel_defs::kConvTranspose2d{nullptr, reference_kernel<RefConvTranspose2d>};

}  // namespace telar::backend::cpu
