// Expand (a [1, ...] parameter repeated over the batch) on the reference kernel.
#include <algorithm>

#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

class RefExpand final : public Kernel {
 public:
  explicit RefExpand(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override { ops::expand_forward(in(1).data, out().data); }
  void backward() override {
    // The first input gives the batch size only: its gradient is zero.
    if (Tensor* dx = grad_of(0).tensor) std::fill_n(dx->f32(), dx->numel(), 0.0f);
    if (Tensor* dw = grad_of(1).tensor) ops::expand_backward(out().grad, *dw);
  }
};

}  // namespace

const OpKernels op_kernel_defs::kExpand{.reference = reference_kernel<RefExpand>,
                                        .backward_reads_output = false};

}  // namespace telar::backend::cpu
