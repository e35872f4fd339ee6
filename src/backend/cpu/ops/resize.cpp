// Resize on oneDNN resampling in inference plans, in whatever layout its input arrives in:
// linear with half pixels (oneDNN's "linear" is PyTorch's align_corners=False) and nearest by a
// whole factor on each axis (where oneDNN's rounded half-pixel coordinates pick PyTorch's
// floor(o * in / out)). Training, aligned corners and other nearest factors run the reference
// kernel.
#include <optional>

#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

using md = dnnl::memory::desc;

std::optional<dnnl::algorithm> resampling_of(const graph::ResizeAttrs& a, const Shape& x) {
  if (a.mode == graph::ResizeMode::Linear)
    return a.align_corners ? std::nullopt : std::optional(dnnl::algorithm::resampling_linear);
  if (a.out_h % x[2] == 0 && a.out_w % x[3] == 0) return dnnl::algorithm::resampling_nearest;
  return std::nullopt;
}

class DnnlResize final : public DnnlForwardOnlyKernel {
 public:
  DnnlResize(KernelIO io, dnnl::algorithm alg) : DnnlForwardOnlyKernel(std::move(io)) {
    const md& src = in(0).md;
    const md dst(to_dims(out().shape), src.data_type(), dnnl::memory::format_tag::any);
    dnnl::resampling_forward::primitive_desc pd(
        dnnl::resampling_forward::desc(dnnl::prop_kind::forward_inference, alg, src, dst),
        default_attr(), cpu_engine());
    define_output(pd.dst_desc(), is_plain(pd.dst_desc(), out().shape));
    fwd_ = bind<dnnl::resampling_forward>(
        pd, {{DNNL_ARG_SRC, in(0).data_memory()}, {DNNL_ARG_DST, out().data_memory()}});
  }
};

std::unique_ptr<Kernel> fast_resize(KernelIO io, LayoutConverter&) {
  if (!io.inference) return nullptr;
  const auto alg = resampling_of(io.node->attr<graph::ResizeAttrs>(), io.inputs[0]->shape);
  if (!alg) return nullptr;
  return std::make_unique<DnnlResize>(std::move(io), *alg);
}

class RefResize final : public Kernel {
 public:
  explicit RefResize(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override {
    ops::resize_forward(node().attr<graph::ResizeAttrs>(), in(0).data, out().data);
  }
  void backward() override {
    if (grad_of(0).tensor)
      ops::resize_backward(node().attr<graph::ResizeAttrs>(), out().grad, *grad_of(0).tensor);
  }
};

}  // namespace

const OpKernels op_kernel_defs::kResize{fast_resize, reference_kernel<RefResize>,
                                        /*int8=*/false, /*backward_reads_output=*/false};

}  // namespace telar::backend::cpu
