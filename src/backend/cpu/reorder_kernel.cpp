// Layout conversion between two slots of the same value (e.g. nChw16c -> nchw), and back for
// gradients.
#include "backend/cpu/dnnl_context.hpp"
#include "backend/cpu/kernel.hpp"

namespace telar::backend::cpu {

namespace {

class ReorderKernel final : public Kernel {
 public:
  explicit ReorderKernel(KernelIO io) : Kernel(std::move(io)) {
    src_ = in(0).data_memory();
    dst_ = out().data_memory();
    fwd_ = dnnl::reorder(src_, dst_);
  }
  void prepare_backward() override {
    if (!grad_of(0).tensor) return;
    diff_dst_ = out().grad_memory();
    diff_src_ = dnnl::memory(in(0).md, cpu_engine(), grad_of(0).tensor->raw());
    bwd_ = dnnl::reorder(diff_dst_, diff_src_);
  }
  void forward(bool, std::uint64_t) override { fwd_.execute(cpu_stream(), src_, dst_); }
  void backward() override {
    if (grad_of(0).tensor) bwd_.execute(cpu_stream(), diff_dst_, diff_src_);
  }

 private:
  dnnl::memory src_, dst_, diff_src_, diff_dst_;
  dnnl::reorder fwd_, bwd_;
};

}  // namespace

std::unique_ptr<Kernel> make_reorder_kernel(KernelIO io) {
  return std::make_unique<ReorderKernel>(std::move(io));
}

}  // namespace telar::backend::cpu
