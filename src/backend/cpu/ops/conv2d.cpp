// Conv2d on oneDNN (grouped and depthwise too). oneDNN picks the activation and weight
// layouts it runs fastest in (e.g. nChw16c); the plan keeps activations in that layout
// between oneDNN kernels, and weights are reordered from the plain parameters only when the
// parameters change. Post-ops (graph::PostOps: a residual sum, an activation) run inside the
// inference primitive. Precision::INT8 has its own kernel (DnnlConvInt8 below).
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

// Strides, dilations, paddings (PyTorch's output size) and plain f32 weights of a Conv2d.
struct ConvGeometry {
  ConvGeometry() = default;
  ConvGeometry(const graph::Conv2dAttrs& a, const Shape& x, const Shape& y)
      : strides{a.stride_h, a.stride_w},
        dilates{a.dilation_h - 1, a.dilation_w - 1},
        pad_l{a.pad_h, a.pad_w},
        pad_r{padding_right(x[2], y[2], a.kernel_h, a.stride_h, a.pad_h, a.dilation_h),
              padding_right(x[3], y[3], a.kernel_w, a.stride_w, a.pad_w, a.dilation_w)},
        weights(a.groups == 1 ? md({a.out_channels, a.in_channels, a.kernel_h, a.kernel_w},
                                   dnnl::memory::data_type::f32, dnnl::memory::format_tag::oihw)
                              : md({a.groups, a.out_channels / a.groups, a.in_channels / a.groups,
                                    a.kernel_h, a.kernel_w},
                                   dnnl::memory::data_type::f32, dnnl::memory::format_tag::goihw)) {
  }
  dnnl::memory::dims strides, dilates, pad_l, pad_r;
  md weights;
};

// Whether an fp32 inference convolution gains from oneDNN's Winograd kernels (F(2x2,3x3) and
// F(4x4,3x3) transforms: 2.25-4x fewer multiplications, but 16/9-4x larger weights): dense
// 3x3, stride 1, undilated, at least 32 channels in and out, 8 M multiply-adds per call and an
// output of at least 7x7 (its tiles are 2x2 or 4x4 outputs). Measured on this AVX-512 machine
// at 2 threads, layer by layer inside whole networks: 1.2-2.2x faster than the direct kernel on
// ResNet-18's 3x3 convolutions at batch 1 (512 channels at 7x7: 0.53 against 0.64 ms) and
// 32; below those sizes no faster (16 channels at 28x28) or slower (64 channels at 7x7 at batch
// 1: 2x; 256 at 4x4 at batch 1: 1.45x; 512 at 2x2 at batch 32, 38 MB of transformed weights
// read per call: 2.5x).
// Its transforms round differently from a direct convolution (~1e-6 relative).
bool winograd_pays(const graph::Conv2dAttrs& a, const Shape& y) {
  if (a.groups != 1 || a.kernel_h != 3 || a.kernel_w != 3 || a.stride_h != 1 || a.stride_w != 1 ||
      a.dilation_h != 1 || a.dilation_w != 1 || a.in_channels < 32 || a.out_channels < 32 ||
      y[2] < 7 || y[3] < 7)
    return false;
  return y[0] * y[2] * y[3] * a.out_channels * a.in_channels * 9 >= (std::int64_t{8} << 20);
}

class DnnlConv final : public DnnlKernel {
 public:
  DnnlConv(KernelIO io, LayoutConverter& converter) : DnnlKernel(std::move(io)) {
    const auto& a = node().attr<graph::Conv2dAttrs>();
    const auto& x = in(0).shape;
    const auto& y = out().shape;
    geo_ = ConvGeometry(a, x, y);
    const auto f32 = dnnl::memory::data_type::f32;
    const auto any = dnnl::memory::format_tag::any;
    const dnnl::memory::dims wdims = geo_.weights.dims();
    b_md_ = a.bias ? in(2).md : md();
    // Let oneDNN choose layouts for inference; training uses the same activation layouts.
    // bf16: activations and weights in bf16 (reordered from f32 where they arrive so), the
    // bias and the accumulation in f32.
    const auto dt = io_.bf16 ? dnnl::memory::data_type::bf16 : f32;
    const md src(to_dims(x), dt, any), w(wdims, dt, any), dst(to_dims(y), dt, any);
    const dnnl::primitive_attr attr = attr_with_post_ops(a.post);
    conv_fwd::primitive_desc pd;
    if (io_.winograd && !io_.bf16 && winograd_pays(a, y)) {
      try {
        pd = make_fwd(prop_kind::forward_inference, src, w, dst, attr,
                      algorithm::convolution_winograd);
      } catch (const dnnl::error&) {
        // No Winograd kernel for this ISA or these post-ops: the direct one below.
      }
    }
    if (!pd) pd = make_fwd(prop_kind::forward_inference, src, w, dst, attr);
    io_.inputs[0] = converter.convert(io_.inputs[0], pd.src_desc());
    src_md_ = pd.src_desc();
    dst_md_ = pd.dst_desc();
    if (a.post.sum) {
      // The sum post-op adds what the destination holds: the output is written over the
      // summand's storage (in its layout), which the inference passes leave no other reader.
      Slot* summand = converter.convert_to_overwrite(io_.inputs.back(), dst_md_);
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
  // differs from the value's, a reorder is staged before or after, through buffers used only
  // while this step's backward runs (step_buffer); both primitives read one staged copy of the
  // output's gradient where they want the same layout.
  void prepare_backward() override {
    conv_fwd::primitive_desc hint = train_pd();
    const auto f32 = dnnl::memory::data_type::f32;
    const auto any = dnnl::memory::format_tag::any;
    const md src_any(src_md_.dims(), f32, any), dst_any(dst_md_.dims(), f32, any),
        w_any(geo_.weights.dims(), f32, any);
    const dnnl::memory diff_dst = out().grad_memory();
    if (grad_of(0).tensor) {
      conv_bwd_data::primitive_desc pd(
          conv_bwd_data::desc(algorithm::convolution_direct, src_any, w_any, dst_any, geo_.strides,
                              geo_.dilates, geo_.pad_l, geo_.pad_r),
          default_attr(), cpu_engine(), hint);
      dnnl::memory dd = stage_in(diff_dst, pd.diff_dst_desc(), before_data_);
      bwd_data_diff_dst_ = dd;
      dnnl::memory target = memory_over(src_md_, *grad_of(0).tensor);
      dnnl::memory ds = target;
      if (pd.diff_src_desc() != src_md_) {
        ds = step_buffer(pd.diff_src_desc());
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
                                 geo_.strides, geo_.dilates, geo_.pad_l, geo_.pad_r),
          default_attr(), cpu_engine(), hint);
      dnnl::memory src = stage_in(in(0).data_memory(), pd.src_desc(), before_weights_);
      dnnl::memory dd = bwd_data_.ready() && pd.diff_dst_desc() == bwd_data_diff_dst_.get_desc()
                            ? bwd_data_diff_dst_
                            : stage_in(diff_dst, pd.diff_dst_desc(), before_weights_dd_);
      dnnl::memory dw_plain = memory_over(geo_.weights, *grad_of(1).tensor);
      dnnl::memory dw = dw_plain;
      if (pd.diff_weights_desc() != geo_.weights) {
        dw = step_buffer(pd.diff_weights_desc());
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
                                    const dnnl::primitive_attr& attr = default_attr(),
                                    algorithm alg = algorithm::convolution_direct) {
    conv_fwd::desc d = b_md_ ? conv_fwd::desc(kind, alg, src, w, b_md_, dst, geo_.strides,
                                              geo_.dilates, geo_.pad_l, geo_.pad_r)
                             : conv_fwd::desc(kind, alg, src, w, dst, geo_.strides, geo_.dilates,
                                              geo_.pad_l, geo_.pad_r);
    return conv_fwd::primitive_desc(d, attr, cpu_engine());
  }

  conv_fwd::primitive_desc train_pd() {
    if (!train_pd_ready_) {
      const auto any = dnnl::memory::format_tag::any;
      train_pd_ = make_fwd(prop_kind::forward_training, src_md_,
                           md(geo_.weights.dims(), dnnl::memory::data_type::f32, any), dst_md_);
      train_pd_ready_ = true;
    }
    return train_pd_;
  }

  dnnl::memory& weights_for(const md& wanted, Weights& w) {
    if (!w.memory) {
      dnnl::memory plain = memory_over(geo_.weights, in(1).data);
      if (wanted == geo_.weights) {
        w.memory = plain;
      } else {
        w.memory = weights_in(in(1).data, wanted);
        w.reorder = {dnnl::reorder(plain, w.memory), {{DNNL_ARG_FROM, plain}, {DNNL_ARG_TO, w.memory}}};
      }
    }
    return w.memory;
  }

  // `from` as the primitive wants it: itself, or a buffer that `reorder` fills.
  dnnl::memory stage_in(const dnnl::memory& from, const md& wanted, BoundPrimitive& reorder) {
    if (from.get_desc() == wanted) return from;
    dnnl::memory local = step_buffer(wanted);
    reorder = {dnnl::reorder(from, local), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, local}}};
    return local;
  }

  void refresh_weights(Weights& w, std::uint64_t& seen) {
    if (w.reorder.ready() && parameters_changed(io_, seen)) w.reorder.run();
  }

  ConvGeometry geo_;
  md src_md_, dst_md_, b_md_;
  conv_fwd::primitive_desc infer_pd_, train_pd_;
  bool train_pd_ready_ = false;
  bool inference_only_ = false;  // post-ops or bf16
  Weights infer_w_, train_w_, bwd_w_;
  std::uint64_t seen_infer_ = ~0ULL, seen_train_ = ~0ULL, seen_bwd_ = ~0ULL;
  BoundPrimitive train_, infer_, bwd_data_, bwd_weights_, dw_to_plain_;
  BoundPrimitive before_data_, after_data_, before_weights_, before_weights_dd_;
  dnnl::memory bwd_data_diff_dst_;  // the output's gradient as the backward-data primitive reads it
};

// Conv2d in int8 (Precision::INT8, inference only): u8 or s8 activations as calibration encoded
// them, s8 weights with one scale per output channel (quantized from the f32 parameters when
// they change), s32 accumulation. The primitive's output scales (input scale x weight scale)
// bring the accumulator to real values; the residual sum (the summand in its own encoding), the
// activation, and the requantization to the output's encoding (an eltwise linear by 1 / its
// scale) follow as post-ops. The bias is added before the output scales (oneDNN 2's
// order), so it is given divided by them. An output without an encoding stays f32.
class DnnlConvInt8 final : public DnnlKernel {
 public:
  DnnlConvInt8(KernelIO io, LayoutConverter& converter) : DnnlKernel(std::move(io)) {
    using dt = dnnl::memory::data_type;
    const auto any = dnnl::memory::format_tag::any;
    const auto& a = attrs();
    const auto& x = in(0).shape;
    const auto& y = out().shape;
    geo_ = ConvGeometry(a, x, y);
    in_ = in(0).int8;
    out_ = out().int8;
    const dt src_dt = int8_type(in_.is_unsigned);
    const dt dst_dt = out_.scale > 0.0f ? int8_type(out_.is_unsigned) : dt::f32;
    src_any_ = md(to_dims(x), src_dt, any);
    w_any_ = md(geo_.weights.dims(), dt::s8, any);
    dst_any_ = md(to_dims(y), dst_dt, any);
    if (a.bias) b_md_ = md({a.out_channels}, dt::f32, dnnl::memory::format_tag::a);
    w_scales_.assign(static_cast<std::size_t>(a.out_channels), 1.0f);
    if (a.post.sum && out_.scale > 0.0f) {
      const Int8Encoding& summand = io_.inputs.back()->int8;
      sum_ = summand.scale > 0.0f ? summand : out_;
    }
    const conv_fwd::primitive_desc pd = make_pd();
    io_.inputs[0] = converter.convert(io_.inputs[0], pd.src_desc());
    const md dst_md = pd.dst_desc();
    if (a.post.sum) {
      // As in DnnlConv: the output is written over the summand. With int8 output the summand
      // keeps its own encoding in the output's layout (the sum post-op reads it as its type and
      // scale): requantized to the output's, a negative summand under a ReLU'd (u8) output
      // would be clipped to zero before the sum.
      Slot* summand = io_.inputs.back();
      if (sum_.scale > 0.0f) {
        summand = converter.convert_to_overwrite(
            summand, with_data_type(dst_md, int8_type(sum_.is_unsigned)), sum_.scale);
      } else {
        summand = converter.convert_to_overwrite(summand, dst_md);
      }
      io_.inputs.back() = summand;
      out().md = dst_md;
      out().plain = summand->plain;
      out().data = summand->data;
    } else {
      define_output(dst_md, is_plain(dst_md, y));
    }
    if (dst_dt == dt::f32) out().int8 = {};
  }

  void forward(bool training, std::uint64_t) override {
    require_inference(training);
    if (parameters_changed(io_, seen_)) quantize_weights();
    conv_.run();
  }
  void backward() override {}  // never: inference only

 private:
  const graph::Conv2dAttrs& attrs() const { return node().attr<graph::Conv2dAttrs>(); }

  std::vector<float> output_scales() const { return scaled(w_scales_, in_.scale); }

  conv_fwd::primitive_desc make_pd() const {
    const auto& a = attrs();
    dnnl::primitive_attr attr = default_attr();
    attr.set_output_scales(1 << 1, output_scales());
    dnnl::post_ops ops;
    if (a.post.sum) {
      if (sum_.scale > 0.0f)
        ops.append_sum(sum_.scale, int8_type(sum_.is_unsigned));
      else
        ops.append_sum(1.0f);  // an f32 output and summand
    }
    append_activation(ops, a.post);
    if (out_.scale > 0.0f)
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, 1.0f / out_.scale, 0.0f);
    attr.set_post_ops(ops);
    const conv_fwd::desc d =
        b_md_
            ? conv_fwd::desc(prop_kind::forward_inference, algorithm::convolution_direct, src_any_,
                             w_any_, b_md_, dst_any_, geo_.strides, geo_.dilates, geo_.pad_l,
                             geo_.pad_r)
            : conv_fwd::desc(prop_kind::forward_inference, algorithm::convolution_direct, src_any_,
                             w_any_, dst_any_, geo_.strides, geo_.dilates, geo_.pad_l, geo_.pad_r);
    return conv_fwd::primitive_desc(d, attr, cpu_engine());
  }

  // The weights' per-channel scales, the s8 weights and the bias in accumulator units, and the
  // primitive whose output scales depend on them.
  void quantize_weights() {
    const auto& a = attrs();
    const Tensor& w = in(1).data;
    const std::int64_t channels = a.out_channels;
    weight_scales(w.f32(), channels, w.numel() / channels, w_scales_.data());
    const conv_fwd::primitive_desc pd = make_pd();
    if (!weights_) weights_ = owned(pd.weights_desc());
    quantize_into(memory_over(geo_.weights, w), weights_,
                  a.groups == 1 ? 1 << 0 : (1 << 0) | (1 << 1), w_scales_);
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, in(0).data_memory()},
                                                  {DNNL_ARG_WEIGHTS, weights_},
                                                  {DNNL_ARG_DST, out().data_memory()}};
    if (b_md_) {
      bias_ = divided(in(2).data, output_scales());
      args[DNNL_ARG_BIAS] = memory_over(b_md_, bias_);
    }
    conv_ = bind<conv_fwd>(pd, std::move(args));
  }

  ConvGeometry geo_;
  md src_any_, w_any_, dst_any_, b_md_;
  Int8Encoding in_, out_;
  Int8Encoding sum_;  // the summand's storage in the output's buffer (scale 0: f32)
  std::vector<float> w_scales_;
  dnnl::memory weights_;
  Tensor bias_;
  BoundPrimitive conv_;
  std::uint64_t seen_ = ~0ULL;
};

std::unique_ptr<Kernel> fast_conv(KernelIO io, LayoutConverter& converter) {
  if (io.int8 && io.inputs[0]->int8.scale > 0.0f)
    return std::make_unique<DnnlConvInt8>(std::move(io), converter);
  return std::make_unique<DnnlConv>(std::move(io), converter);
}

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

const OpKernels op_kernel_defs::kConv2d{fast_conv, reference_kernel<RefConv>, /*int8=*/true,
                                        /*backward_reads_output=*/false};

}  // namespace telar::backend::cpu
