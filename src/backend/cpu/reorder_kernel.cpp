// Layout conversion between two slots of the same value (e.g. nChw16c -> nchw), and back for
// gradients. Into or out of int8 storage it quantizes or dequantizes: dst = src * the source's
// scale / the destination's (1 for a float side); oneDNN rounds and saturates.
#include "backend/cpu/dnnl_kernel.hpp"

namespace telar::backend::cpu {

namespace {

class ReorderKernel final : public Kernel {
 public:
  explicit ReorderKernel(KernelIO io) : Kernel(std::move(io)) {
    dnnl::memory src = in(0).data_memory(), dst = out().data_memory();
    const float from = is_int8(in(0).md) ? in(0).int8.scale : 1.0f;
    const float to = is_int8(out().md) ? out().int8.scale : 1.0f;
    dnnl::primitive_attr attr;
    if (from != to) attr.set_output_scales(0, {from / to});
    fwd_ = {dnnl::reorder(src, dst, attr), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}}};
  }
  void prepare_backward() override {
    if (!grad_of(0).tensor) return;
    dnnl::memory diff_dst = out().grad_memory();
    dnnl::memory diff_src(in(0).md, cpu_engine(), grad_of(0).tensor->raw());
    bwd_ = {dnnl::reorder(diff_dst, diff_src), {{DNNL_ARG_FROM, diff_dst}, {DNNL_ARG_TO, diff_src}}};
  }
  void forward(bool, std::uint64_t) override { fwd_.run(); }
  void backward() override {
    if (bwd_.ready()) bwd_.run();
  }

 private:
  BoundPrimitive fwd_, bwd_;
};

}  // namespace

std::unique_ptr<Kernel> make_reorder_kernel(KernelIO io) {
  return std::make_unique<ReorderKernel>(std::move(io));
}

}  // namespace telar::backend::cpu
