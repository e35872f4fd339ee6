// Layout conversion between two slots of the same value (e.g. nChw16c -> nchw), and back for
// gradients.
#include "backend/cpu/dnnl_kernel.hpp"

namespace telar::backend::cpu {

namespace {

class ReorderKernel final : public Kernel {
 public:
  explicit ReorderKernel(KernelIO io) : Kernel(std::move(io)) {
    dnnl::memory src = in(0).data_memory(), dst = out().data_memory();
    fwd_ = {dnnl::reorder(src, dst), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}}};
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
