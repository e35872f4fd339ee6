// ReduceMean on the reference kernel (plain layouts).
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

class RefReduceMean final : public Kernel {
 public:
  explicit RefReduceMean(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override {
    ops::reduce_mean_forward(node().attr<graph::ReduceAttrs>().axis, in(0).data, out().data);
  }
  void backward() override {
    if (grad_of(0).tensor)
      ops::reduce_mean_backward(node().attr<graph::ReduceAttrs>().axis, out().grad,
                                *grad_of(0).tensor);
  }
};

}  // namespace

const OpKernels op_kernel_defs::kReduceMean{nullptr, reference_kernel<RefReduceMean>};

}  // namespace telar::backend::cpu
