// Softmax over the last axis on oneDNN.
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

using dnnl::prop_kind;
using sm_fwd = dnnl::softmax_forward;
using sm_bwd = dnnl::softmax_backward;

class DnnlSoftmax final : public DnnlKernel {
 public:
  DnnlSoftmax(KernelIO io, LayoutConverter& converter) : DnnlKernel(std::move(io)) {
    io_.inputs[0] = converter.to_plain(io_.inputs[0]);
    md_ = in(0).md;
    define_plain_output();
  }

  void forward(bool training, std::uint64_t) override {
    BoundPrimitive& p = training ? train_ : infer_;
    if (!p.ready())
      p = bind<sm_fwd>(make_fwd(training ? prop_kind::forward_training : prop_kind::forward_inference),
                       {{DNNL_ARG_SRC, in(0).data_memory()}, {DNNL_ARG_DST, out().data_memory()}});
    p.run();
  }

  void prepare_backward() override {
    if (!grad_of(0).tensor) return;
    sm_bwd::primitive_desc pd(sm_bwd::desc(md_, md_, axis()), default_attr(), cpu_engine(),
                              make_fwd(prop_kind::forward_training));
    bwd_ = bind<sm_bwd>(pd, {{DNNL_ARG_DST, out().data_memory()},
                             {DNNL_ARG_DIFF_DST, out().grad_memory()},
                             {DNNL_ARG_DIFF_SRC, memory_over(md_, *grad_of(0).tensor)}});
  }

  void backward() override {
    if (bwd_.ready()) bwd_.run();
  }

 private:
  sm_fwd::primitive_desc make_fwd(prop_kind kind) const {
    return sm_fwd::primitive_desc(sm_fwd::desc(kind, md_, axis()), default_attr(), cpu_engine());
  }
  int axis() const { return md_.data.ndims - 1; }
  dnnl::memory::desc md_;
  BoundPrimitive train_, infer_, bwd_;
};

class RefSoftmax final : public Kernel {
 public:
  explicit RefSoftmax(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override { ops::softmax_forward(in(0).data, out().data); }
  void backward() override {
    if (grad_of(0).tensor) ops::softmax_backward(out().data, out().grad, *grad_of(0).tensor);
  }
};

}  // namespace

const OpKernels op_kernel_defs::kSoftmax{fast_kernel<DnnlSoftmax>, reference_kernel<RefSoftmax>};

}  // namespace telar::backend::cpu
