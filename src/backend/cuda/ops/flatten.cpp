// Flatten: the output aliases the input's storage.
#include "backend/cuda/ops/op_kernels.hpp"

namespace telar::backend::cuda {

namespace {

// Flatten relabels: the output aliases the input's device storage.
class Flatten final : public Kernel {
 public:
  explicit Flatten(KernelIO io) : Kernel(std::move(io)) {
    out().data = in(0).data;
    out().numel = shape_numel(out().shape);
  }
  void forward(bool, std::uint64_t) override {}
  void backward() override {
    if (!grad_of(0)) return;
    kernels::copy(stream(), grad_of(0), out().grad, out().numel);
    check_launch("flatten backward");
  }
};

}  // namespace

const OpKernels op_kernel_defs::kFlatten{kernel_of<Flatten>};

}  // namespace telar::backend::cuda
