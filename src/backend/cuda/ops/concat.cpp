// Concat along an axis after the batch: per index of the axes before it (`outer`), each input's
// run of elements follows the previous input's.
#include "backend/cuda/ops/op_kernels.hpp"

namespace telar::backend::cuda {

namespace {

class Concat final : public Kernel {
 public:
  explicit Concat(KernelIO io) : Kernel(std::move(io)) {
    define_output();
    for (int d = 0; d < node().attr<graph::ConcatAttrs>().axis; ++d) outer_ *= out().shape.at(d);
  }
  void forward(bool, std::uint64_t) override {
    const std::int64_t total = out().numel / outer_;
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < io_.inputs.size(); ++i) {
      const std::int64_t width = in(i).numel / outer_;
      kernels::concat_part(stream(), in(i).f32(), out().f32(), outer_, width, offset, total);
      offset += width;
    }
    check_launch("concat forward");
  }
  void backward() override {
    const std::int64_t total = out().numel / outer_;
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < io_.inputs.size(); ++i) {
      const std::int64_t width = in(i).numel / outer_;
      if (grad_of(i))
        kernels::split_part(stream(), out().grad, grad_of(i), outer_, width, offset, total);
      offset += width;
    }
    check_launch("concat backward");
  }

 private:
  std::int64_t outer_ = 1;  // the batch, times the axes between it and the concatenated one
};

}  // namespace

const OpKernels op_kernel_defs::kConcat{kernel_of<Concat>};

}  // namespace telar::backend::cuda
