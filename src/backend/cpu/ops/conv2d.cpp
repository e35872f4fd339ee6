// Conv2d on oneDNN (grouped and depthwise too). oneDNN picks the activation and weight
// layouts it runs fastest in (e.g. nChw16c); the plan keeps activations in that layout
// between oneDNN kernels, and weights are reordered from the plain parameters only when the
// parameters change. Post-ops (graph::PostOps: a residual sum, an activation) run inside the
// inference primitive.
#include "backend/cpu/dnnl_eltwise.hpp"
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

using dnnl::algorithm;
using dnnl::prop_kind;
using md = dnnl::memory::desc;
using conv_fwd = dnnl::convolution_forward;
using conv_bwd_data = dnnl::convolution_backward_data;
using conv_bwd_weights = dnnl::convolution_backward_weights;

class DnnlConv final : public DnnlKernel {
 public:
  DnnlConv(KernelIO io, LayoutConverter& converter) : DnnlKernel(std::move(io)) {
    const auto& a = node().attr<graph::Conv2dAttrs>();
    const auto& x = in(0).shape;
    const auto& y = out().shape;
    strides_ = {a.stride_h, a.stride_w};
    dilates_ = {a.dilation_h - 1, a.dilation_w - 1};
    pad_l_ = {a.pad_h, a.pad_w};
    pad_r_ = {padding_right(x[2], y[2], a.kernel_h, a.stride_h, a.pad_h, a.dilation_h),
              padding_right(x[3], y[3], a.kernel_w, a.stride_w, a.pad_w, a.dilation_w)};
    const auto f32 = dnnl::memory::data_type::f32;
    const auto any = dnnl::memory::format_tag::any;
    dnnl::memory::dims wdims =
        a.groups == 1 ? dnnl::memory::dims{a.out_channels, a.in_channels, a.kernel_h, a.kernel_w}
                      : dnnl::memory::dims{a.groups, a.out_channels / a.groups,
                                           a.in_channels / a.groups, a.kernel_h, a.kernel_w};
    w_plain_md_ = md(wdims, f32, a.groups == 1 ? dnnl::memory::format_tag::oihw
                                               : dnnl::memory::format_tag::goihw);
    b_md_ = a.bias ? in(2).md : md();
    // Let oneDNN choose layouts for inference; training uses the same activation layouts.
    // bf16: activations and weights in bf16 (reordered from f32 where they arrive so), the
    // bias and the accumulation in f32.
    const auto dt = io_.bf16 ? dnnl::memory::data_type::bf16 : f32;
    auto pd = make_fwd(prop_kind::forward_inference, md(to_dims(x), dt, any), md(wdims, dt, any),
                       md(to_dims(y), dt, any), attr_with_post_ops(a.post));
    io_.inputs[0] = converter.convert(io_.inputs[0], pd.src_desc());
    src_md_ = pd.src_desc();
    dst_md_ = pd.dst_desc();
    if (a.post.sum) {
      // The sum post-op adds what the destination holds: the output is written over the
      // summand's storage (in its layout), which the inference passes leave no other reader.
      Slot* summand = converter.convert(io_.inputs.back(), dst_md_);
      io_.inputs.back() = summand;
      out().md = dst_md_;
      out().plain = summand->plain;
      out().data = summand->data;
    } else {
      define_output(dst_md_, is_plain(dst_md_, y));
    }
    infer_pd_ = pd;
    inference_only_ = a.post.any() || io_.bf16;
  }

  void forward(bool training, std::uint64_t) override {
    if (inference_only_) require_inference(training);
    BoundPrimitive& p = training ? train_ : infer_;
    if (!p.ready()) {
      conv_fwd::primitive_desc pd =
          training ? train_pd() : infer_pd_;
      dnnl::memory& w = weights_for(pd.weights_desc(), training ? train_w_ : infer_w_);
      std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, in(0).data_memory()},
                                                    {DNNL_ARG_WEIGHTS, w},
                                                    {DNNL_ARG_DST, out().data_memory()}};
      if (b_md_) args[DNNL_ARG_BIAS] = in(2).data_memory();
      p = bind<conv_fwd>(pd, std::move(args));
    }
    refresh_weights(training ? train_w_ : infer_w_, training ? seen_train_ : seen_infer_);
    p.run();
  }

  // Backward primitives choose their own layouts ("any"): some layouts the forward prefers
  // (e.g. nhwc for brgconv) have only slow reference backward kernels. Where the chosen layout
  // differs from the value's, a reorder is staged before or after.
  void prepare_backward() override {
    conv_fwd::primitive_desc hint = train_pd();
    const auto f32 = dnnl::memory::data_type::f32;
    const auto any = dnnl::memory::format_tag::any;
    const md src_any(src_md_.dims(), f32, any), dst_any(dst_md_.dims(), f32, any),
        w_any(w_plain_md_.dims(), f32, any);
    const dnnl::memory diff_dst = out().grad_memory();
    if (grad_of(0).tensor) {
      conv_bwd_data::primitive_desc pd(
          conv_bwd_data::desc(algorithm::convolution_direct, src_any, w_any, dst_any, strides_,
                              dilates_, pad_l_, pad_r_),
          default_attr(), cpu_engine(), hint);
      dnnl::memory dd = stage_in(diff_dst, pd.diff_dst_desc(), before_data_);
      dnnl::memory target = memory_over(src_md_, *grad_of(0).tensor);
      dnnl::memory ds = target;
      if (pd.diff_src_desc() != src_md_) {
        ds = owned(pd.diff_src_desc());
        after_data_ = {dnnl::reorder(ds, target), {{DNNL_ARG_FROM, ds}, {DNNL_ARG_TO, target}}};
      }
      dnnl::memory& w = weights_for(pd.weights_desc(), pd.weights_desc() == hint.weights_desc()
                                                           ? train_w_
                                                           : bwd_w_);
      bwd_data_ = bind<conv_bwd_data>(pd, {{DNNL_ARG_DIFF_DST, dd},
                                           {DNNL_ARG_WEIGHTS, w},
                                           {DNNL_ARG_DIFF_SRC, ds}});
    }
    if (grad_of(1).tensor) {
      conv_bwd_weights::primitive_desc pd(
          conv_bwd_weights::desc(algorithm::convolution_direct, src_any, w_any, b_md_, dst_any,
                                 strides_, dilates_, pad_l_, pad_r_),
          default_attr(), cpu_engine(), hint);
      dnnl::memory src = stage_in(in(0).data_memory(), pd.src_desc(), before_weights_);
      dnnl::memory dd = stage_in(diff_dst, pd.diff_dst_desc(), before_weights_dd_);
      dnnl::memory dw_plain = memory_over(w_plain_md_, *grad_of(1).tensor);
      dnnl::memory dw = dw_plain;
      if (pd.diff_weights_desc() != w_plain_md_) {
        dw = owned(pd.diff_weights_desc());
        dw_to_plain_ = {dnnl::reorder(dw, dw_plain), {{DNNL_ARG_FROM, dw}, {DNNL_ARG_TO, dw_plain}}};
      }
      std::unordered_map<int, dnnl::memory> args = {
          {DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_DIFF_WEIGHTS, dw}};
      if (b_md_) args[DNNL_ARG_DIFF_BIAS] = memory_over(b_md_, *grad_of(2).tensor);
      bwd_weights_ = bind<conv_bwd_weights>(pd, std::move(args));
    }
  }

  void backward() override {
    if (bwd_data_.ready()) {
      refresh_weights(bwd_w_, seen_bwd_);
      for (auto* r : {&before_data_}) if (r->ready()) r->run();
      bwd_data_.run();
      if (after_data_.ready()) after_data_.run();
    }
    if (bwd_weights_.ready()) {
      for (auto* r : {&before_weights_, &before_weights_dd_}) if (r->ready()) r->run();
      bwd_weights_.run();
      if (dw_to_plain_.ready()) dw_to_plain_.run();
    }
  }

 private:
  struct Weights {
    dnnl::memory memory;        // what the primitive reads
    BoundPrimitive reorder;     // plain parameters -> memory (when layouts differ)
  };

  conv_fwd::primitive_desc make_fwd(prop_kind kind, const md& src, const md& w, const md& dst,
                                    const dnnl::primitive_attr& attr = default_attr()) {
    conv_fwd::desc d = b_md_ ? conv_fwd::desc(kind, algorithm::convolution_direct, src, w, b_md_,
                                              dst, strides_, dilates_, pad_l_, pad_r_)
                             : conv_fwd::desc(kind, algorithm::convolution_direct, src, w, dst,
                                              strides_, dilates_, pad_l_, pad_r_);
    return conv_fwd::primitive_desc(d, attr, cpu_engine());
  }

  conv_fwd::primitive_desc train_pd() {
    if (!train_pd_ready_) {
      const auto any = dnnl::memory::format_tag::any;
      train_pd_ = make_fwd(prop_kind::forward_training, src_md_,
                           md(w_plain_md_.dims(), dnnl::memory::data_type::f32, any), dst_md_);
      train_pd_ready_ = true;
    }
    return train_pd_;
  }

  dnnl::memory& weights_for(const md& wanted, Weights& w) {
    if (!w.memory) {
      dnnl::memory plain = memory_over(w_plain_md_, in(1).data);
      if (wanted == w_plain_md_) {
        w.memory = plain;
      } else {
        w.memory = owned(wanted);
        w.reorder = {dnnl::reorder(plain, w.memory), {{DNNL_ARG_FROM, plain}, {DNNL_ARG_TO, w.memory}}};
      }
    }
    return w.memory;
  }

  // `from` as the primitive wants it: itself, or a buffer that `reorder` fills.
  dnnl::memory stage_in(const dnnl::memory& from, const md& wanted, BoundPrimitive& reorder) {
    if (from.get_desc() == wanted) return from;
    dnnl::memory local = owned(wanted);
    reorder = {dnnl::reorder(from, local), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, local}}};
    return local;
  }

  void refresh_weights(Weights& w, std::uint64_t& seen) {
    if (w.reorder.ready() && parameters_changed(io_, seen)) w.reorder.run();
  }

  dnnl::memory::dims strides_, dilates_, pad_l_, pad_r_;
  md src_md_, dst_md_, w_plain_md_, b_md_;
  conv_fwd::primitive_desc infer_pd_, train_pd_;
  bool train_pd_ready_ = false;
  bool inference_only_ = false;  // post-ops or bf16
  Weights infer_w_, train_w_, bwd_w_;
  std::uint64_t seen_infer_ = ~0ULL, seen_train_ = ~0ULL, seen_bwd_ = ~0ULL;
  BoundPrimitive train_, infer_, bwd_data_, bwd_weights_, dw_to_plain_;
  BoundPrimitive before_data_, after_data_, before_weights_, before_weights_dd_;
};

class RefConv final : public Kernel {
 public:
  explicit RefConv(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool training, std::uint64_t) override {
    ops::conv2d_forward(attrs(), in(0).data, in(1).data, has_bias() ? &in(2).data : nullptr,
                        out().data);
    if (attrs().post.any()) {
      require_inference(training);
      ops::apply_post_ops(attrs().post, attrs().post.sum ? &io_.inputs.back()->data : nullptr,
                          out().data);
    }
  }
  void backward() override {
    ops::conv2d_backward(attrs(), in(0).data, in(1).data, out().grad, grad_of(0).tensor,
                         grad_of(1).tensor, has_bias() ? grad_of(2).tensor : nullptr);
  }

 private:
  const graph::Conv2dAttrs& attrs() const { return node().attr<graph::Conv2dAttrs>(); }
  bool has_bias() const { return attrs().bias; }
};

}  // namespace

const OpKernels op_kernel_defs::kConv2d{fast_kernel<DnnlConv>, reference_kernel<RefConv>};

}  // namespace telar::backend::cpu
