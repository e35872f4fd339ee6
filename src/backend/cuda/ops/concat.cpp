// Concat along axis 1.
#include "backend/cuda/ops/op_kernels.hpp"

namespace telar::backend::cuda {

namespace {

class Concat final : public Kernel {
 public:
  explicit Concat(KernelIO io) : Kernel(std::move(io)) {
    define_output();
    if (node().attr<graph::ConcatAttrs>().axis != 1)
      fail("internal: node '{}': Concat over axis {} (only axis 1 is supported)", node().name,
           node().attr<graph::ConcatAttrs>().axis);
  }
  void forward(bool, std::uint64_t) override {
    const std::int64_t batch = out().shape.at(0), total = out().numel / batch;
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < io_.inputs.size(); ++i) {
      const std::int64_t width = in(i).numel / batch;
      kernels::concat_part(stream(), in(i).f32(), out().f32(), batch, width, offset, total);
      offset += width;
    }
    check_launch("concat forward");
  }
  void backward() override {
    const std::int64_t batch = out().shape.at(0), total = out().numel / batch;
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < io_.inputs.size(); ++i) {
      const std::int64_t width = in(i).numel / batch;
      if (grad_of(i))
        kernels::split_part(stream(), out().grad, grad_of(i), batch, width, offset, total);
      offset += width;
    }
    check_launch("concat backward");
  }
};

}  // namespace

const OpKernels op_kernel_defs::kConcat{kernel_of<Concat>};

}  // namespace telar::backend::cuda
