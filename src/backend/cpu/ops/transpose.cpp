// Transpose on the reference kernel (plain layouts).
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

class RefTranspose final : public Kernel {
 public:
  explicit RefTranspose(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override {
    ops::transpose_forward(node().attr<graph::TransposeAttrs>().perm, in(0).data, out().data);
  }
  void backward() override {
    if (grad_of(0).tensor)
      ops::transpose_backward(node().attr<graph::TransposeAttrs>().perm, out().grad,
                              *grad_of(0).tensor);
  }
};

}  // namespace

const OpKernels op_kernel_defs::kTranspose{nullptr, reference_kernel<RefTranspose>};

}  // namespace telar::backend::cpu
