// Dropout with the reference kernel's mask.
#include "core/rng.hpp"
#include "backend/cuda/ops/op_kernels.hpp"

namespace telar::backend::cuda {

namespace {

class Dropout final : public Kernel {
 public:
  explicit Dropout(KernelIO io) : Kernel(std::move(io)) {
    define_output();
    mask_.resize(static_cast<std::size_t>(std::max<std::int64_t>(out().numel, 1)));
  }
  void forward(bool training, std::uint64_t stream_number) override {
    const float p = node().attr<graph::DropoutAttrs>().p;
    require(p >= 0.0f && p < 1.0f, "Dropout: p={} must be in [0, 1)", p);
    if (!training || p == 0.0f) {
      kernels::copy(stream(), out().f32(), in(0).f32(), out().numel);
      mask_valid_ = false;
    } else {
      // The CPU's draw: one u64 from the node's stream seeds the per-block streams.
      Rng rng = Rng::derive(io_.seed, stream_number);
      kernels::dropout_forward(stream(), rng.next_u64(), p, in(0).f32(), out().f32(),
                               static_cast<std::uint8_t*>(mask_.get()), out().numel);
      mask_valid_ = true;
    }
    check_launch("dropout forward");
  }
  void backward() override {
    if (!grad_of(0)) return;
    if (mask_valid_)
      kernels::dropout_backward(stream(), node().attr<graph::DropoutAttrs>().p,
                                static_cast<const std::uint8_t*>(mask_.get()), out().grad,
                                grad_of(0), out().numel);
    else
      kernels::copy(stream(), grad_of(0), out().grad, out().numel);
    check_launch("dropout backward");
  }

 private:
  DeviceBuffer mask_;
  bool mask_valid_ = false;
};

}  // namespace

const OpKernels op_kernel_defs::kDropout{kernel_of<Dropout>};

}  // namespace telar::backend::cuda
