// Slice on the reference kernel (plain layouts).
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

class RefSlice final : public Kernel {
 public:
  explicit RefSlice(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override {
    ops::slice_forward(node().attr<graph::SliceAttrs>(), in(0).data, out().data);
  }
  void backward() override {
    if (grad_of(0).tensor)
      ops::slice_backward(node().attr<graph::SliceAttrs>(), out().grad, *grad_of(0).tensor);
  }
};

}  // namespace

const OpKernels op_kernel_defs::kSlice{nullptr, reference_kernel<RefSlice>};

}  // namespace telar::backend::cpu
