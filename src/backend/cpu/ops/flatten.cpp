// Flatten and Reshape: a relabelling of the input (reference kernel only; it moves no data).
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

// Flatten of a plain tensor is a relabelling: the output shares the input's storage.
class RefFlatten final : public Kernel {
 public:
  explicit RefFlatten(KernelIO io) : Kernel(std::move(io)) {
    Slot& o = out();
    o.plain = true;
    o.data = in(0).data.reshaped(o.shape);
    if (o.dtype == DType::F32) o.md = in(0).md.reshape({o.shape.begin(), o.shape.end()});
  }
  void forward(bool, std::uint64_t) override {}
  void backward() override {
    if (grad_of(0).tensor) grad_of(0).tensor->copy_from(out().grad);
  }
};

}  // namespace

const OpKernels op_kernel_defs::kFlatten{nullptr, reference_kernel<RefFlatten>};

}  // namespace telar::backend::cpu
