// Linear on oneDNN (plain activations): the forward pass on the matmul primitive (brgemm on
// AVX-512: 1.2-2x faster than the inner product's gemm from 18 rows up, even at 8; training
// reads the [out, in] weights in place as a transposed operand, inference packs them),
// below that on the inner product (its gemv path wins for a handful of rows); the backward
// passes on the inner product. bench/train/linear_bench.cpp measures both. Over the last axis of
// [B, ..., in] the primitives see the plain tensors as matrices of rows [B * ..., in].
#include "backend/cpu/dnnl_eltwise.hpp"
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

using dnnl::prop_kind;
using ip_fwd = dnnl::inner_product_forward;
using ip_bwd_data = dnnl::inner_product_backward_data;
using ip_bwd_weights = dnnl::inner_product_backward_weights;
using tag = dnnl::memory::format_tag;

// The fewest rows whose forward pass goes to matmul (bench/train/linear_bench.cpp).
constexpr dnnl::memory::dim kMatmulMinRows = 8;

// A plain [B, ..., n] layout as the matrix [B * ..., n] (the same bytes).
dnnl::memory::desc rows_of(const dnnl::memory::desc& md) {
  const dnnl::memory::dims d = md.dims();
  if (d.size() == 2) return md;
  dnnl::memory::dim rows = 1;
  for (std::size_t k = 0; k + 1 < d.size(); ++k) rows *= d[k];
  return md.reshape({rows, d.back()});
}

class DnnlLinear final : public DnnlKernel {
 public:
  DnnlLinear(KernelIO io, LayoutConverter& converter) : DnnlKernel(std::move(io)) {
    io_.inputs[0] = converter.to_plain(io_.inputs[0]);
    define_plain_output();
    src_md_ = rows_of(in(0).md);
    w_md_ = in(1).md;
    dst_md_ = rows_of(out().md);
    b_md_ = has_bias() ? in(2).md : dnnl::memory::desc();
    const auto dims = src_md_.dims();
    use_matmul_ = dims.size() == 2 && dims[0] >= kMatmulMinRows && in(1).plain;
  }

  void forward(bool training, std::uint64_t) override {
    if (post().any()) require_inference(training);
    if (use_matmul_) {
      if (!matmul_.ready()) bind_matmul();
      if (pack_.ready() && parameters_changed(io_, seen_)) pack_.run();
      matmul_.run();
      return;
    }
    BoundPrimitive& p = training ? train_ : infer_;
    if (!p.ready()) {
      ip_fwd::primitive_desc pd(ip_fwd::desc(training ? prop_kind::forward_training
                                                      : prop_kind::forward_inference,
                                             src_md_, w_md_, b_md_, dst_md_),
                                attr_with_post_ops(post()), cpu_engine());
      fwd_pd_ = pd;
      std::unordered_map<int, dnnl::memory> args = {
          {DNNL_ARG_SRC, memory_over(src_md_, in(0).data)},
          {DNNL_ARG_WEIGHTS, in(1).data_memory()},
          {DNNL_ARG_DST, memory_over(dst_md_, out().data)}};
      if (has_bias()) args[DNNL_ARG_BIAS] = in(2).data_memory();
      p = bind<ip_fwd>(pd, std::move(args));
    }
    p.run();
  }

  void prepare_backward() override {
    if (!train_.ready()) forward_pd_for_hint();
    if (grad_of(0).tensor) {
      ip_bwd_data::primitive_desc pd(ip_bwd_data::desc(src_md_, w_md_, dst_md_), default_attr(),
                                     cpu_engine(), fwd_pd_);
      bwd_data_ =
          bind<ip_bwd_data>(pd, {{DNNL_ARG_DIFF_DST, memory_over(dst_md_, out().grad)},
                                 {DNNL_ARG_WEIGHTS, in(1).data_memory()},
                                 {DNNL_ARG_DIFF_SRC, memory_over(src_md_, *grad_of(0).tensor)}});
    }
    if (grad_of(1).tensor) {
      ip_bwd_weights::primitive_desc pd(ip_bwd_weights::desc(src_md_, w_md_, b_md_, dst_md_),
                                        default_attr(), cpu_engine(), fwd_pd_);
      std::unordered_map<int, dnnl::memory> args = {
          {DNNL_ARG_SRC, memory_over(src_md_, in(0).data)},
          {DNNL_ARG_DIFF_DST, memory_over(dst_md_, out().grad)},
          {DNNL_ARG_DIFF_WEIGHTS, memory_over(w_md_, *grad_of(1).tensor)}};
      if (has_bias()) args[DNNL_ARG_DIFF_BIAS] = memory_over(b_md_, *grad_of(2).tensor);
      bwd_weights_ = bind<ip_bwd_weights>(pd, std::move(args));
    }
  }

  void backward() override {
    if (bwd_data_.ready()) bwd_data_.run();
    if (bwd_weights_.ready()) bwd_weights_.run();
  }

 private:
  bool has_bias() const { return io_.inputs.size() > 2; }
  const graph::PostOps& post() const { return node().attr<graph::LinearAttrs>().post; }
  // dst[n, o] = sum_i src[n, i] w[o, i] (+ b[o]): the weights as an [in, out] matrix in
  // column-major order, which is their [out, in] row-major storage. An inference plan packs them
  // as the primitive likes (10-20 % faster on this AVX-512 CPU from 49 to 6,304 rows, the
  // shapes of ViT's and ConvNeXt's Linears), again whenever the parameters change; training
  // reads them in place (they change at every step).
  void bind_matmul() {
    const auto dims = w_md_.dims();  // {out, in}
    const auto f32 = dnnl::memory::data_type::f32;
    const dnnl::memory::desc w_t({dims[1], dims[0]}, f32, tag::ba);
    dnnl::memory::desc b_row;
    if (has_bias()) b_row = dnnl::memory::desc({1, dims[0]}, f32, tag::ab);
    const dnnl::memory::desc w_any =
        io_.inference ? dnnl::memory::desc({dims[1], dims[0]}, f32, tag::any) : w_t;
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md_, w_any, b_row, dst_md_),
                                    attr_with_post_ops(post()), cpu_engine());
    dnnl::memory w = memory_over(w_t, in(1).data);
    if (pd.weights_desc() != w_t) {
      const dnnl::memory plain = w;
      w = weights_in(in(1).data, pd.weights_desc());
      pack_ = {dnnl::reorder(plain, w), {{DNNL_ARG_FROM, plain}, {DNNL_ARG_TO, w}}};
    }
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, memory_over(src_md_, in(0).data)},
                                                  {DNNL_ARG_WEIGHTS, w},
                                                  {DNNL_ARG_DST, memory_over(dst_md_, out().data)}};
    if (has_bias()) args[DNNL_ARG_BIAS] = memory_over(b_row, in(2).data);
    matmul_ = bind<dnnl::matmul>(pd, std::move(args));
  }
  void forward_pd_for_hint() {
    fwd_pd_ = ip_fwd::primitive_desc(
        ip_fwd::desc(prop_kind::forward_training, src_md_, w_md_, b_md_, dst_md_), default_attr(),
        cpu_engine());
  }
  dnnl::memory::desc src_md_, w_md_, b_md_, dst_md_;
  bool use_matmul_ = false;  // the forward pass on matmul (from kMatmulMinRows rows up)
  ip_fwd::primitive_desc fwd_pd_;
  BoundPrimitive train_, infer_, matmul_, pack_, bwd_data_, bwd_weights_;
  std::uint64_t seen_ = ~0ULL;  // the parameters' version pack_ last ran at
};

// Linear in bf16 (Precision::BF16, inference only): matmul on bf16 features and weights (the
// weights converted from the f32 parameters, packed as oneDNN likes, when they change), f32
// bias, accumulation and output, post-ops inside.
class DnnlLinearBf16 final : public DnnlKernel {
 public:
  DnnlLinearBf16(KernelIO io, LayoutConverter& converter) : DnnlKernel(std::move(io)) {
    using dt = dnnl::memory::data_type;
    io_.inputs[0] = converter.convert(  // plain, of any rank
        io_.inputs[0], with_data_type(plain_f32(in(0).shape), dt::bf16));
    define_plain_output();
    const dnnl::memory::desc src = rows_of(in(0).md), dst = rows_of(out().md);
    const auto dims = in(1).md.dims();  // {out, in}
    const dnnl::memory::desc w_t({dims[1], dims[0]}, dt::f32, tag::ba);
    dnnl::memory::desc b_row;
    if (has_bias()) b_row = dnnl::memory::desc({1, dims[0]}, dt::f32, tag::ab);
    dnnl::matmul::primitive_desc pd(
        dnnl::matmul::desc(src, dnnl::memory::desc({dims[1], dims[0]}, dt::bf16, tag::any), b_row,
                           dst),
        attr_with_post_ops(node().attr<graph::LinearAttrs>().post), cpu_engine());
    weights_ = weights_in(in(1).data, pd.weights_desc());
    const dnnl::memory plain = memory_over(w_t, in(1).data);
    to_bf16_ = {dnnl::reorder(plain, weights_), {{DNNL_ARG_FROM, plain}, {DNNL_ARG_TO, weights_}}};
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, memory_over(src, in(0).data)},
                                                  {DNNL_ARG_WEIGHTS, weights_},
                                                  {DNNL_ARG_DST, memory_over(dst, out().data)}};
    if (has_bias()) args[DNNL_ARG_BIAS] = memory_over(b_row, in(2).data);
    matmul_ = bind<dnnl::matmul>(pd, std::move(args));
  }

  void forward(bool training, std::uint64_t) override {
    require_inference(training);
    if (parameters_changed(io_, seen_)) to_bf16_.run();
    matmul_.run();
  }
  void backward() override {}  // never: inference only

 private:
  bool has_bias() const { return io_.inputs.size() > 2; }
  dnnl::memory weights_;
  BoundPrimitive to_bf16_, matmul_;
  std::uint64_t seen_ = ~0ULL;
};

// Linear in int8 (Precision::INT8, inference only): the inner product on u8/s8 features (quantized
// with the scale calibration measured) and s8 weights with one scale per output feature (quantized
// from the f32 parameters when they change), s32 accumulation, output scales back to real
// values, post-ops, f32 output. The bias is added before the output scales (oneDNN 2's order),
// so it is given divided by them.
class DnnlLinearInt8 final : public DnnlKernel {
 public:
  DnnlLinearInt8(KernelIO io, LayoutConverter& converter) : DnnlKernel(std::move(io)) {
    using dt = dnnl::memory::data_type;
    in_ = in(0).int8;
    io_.inputs[0] = converter.convert(  // plain, of any rank
        io_.inputs[0], with_data_type(plain_f32(in(0).shape), int8_type(in_.is_unsigned)));
    define_plain_output();
    src_ = rows_of(in(0).md);
    dst_ = rows_of(out().md);
    const auto dims = in(1).md.dims();  // {out, in}
    w_plain_ = in(1).md;
    w_any_ = dnnl::memory::desc(dims, dt::s8, tag::any);
    if (has_bias()) b_md_ = dnnl::memory::desc({dims[0]}, dt::f32, tag::a);
    w_scales_.assign(static_cast<std::size_t>(dims[0]), 1.0f);
  }

  void forward(bool training, std::uint64_t) override {
    require_inference(training);
    if (parameters_changed(io_, seen_)) quantize_weights();
    ip_.run();
  }
  void backward() override {}  // never: inference only

 private:
  bool has_bias() const { return io_.inputs.size() > 2; }

  void quantize_weights() {
    const Tensor& w = in(1).data;
    const std::int64_t outputs = w.dim(0);
    weight_scales(w.f32(), outputs, w.numel() / outputs, w_scales_.data());
    dnnl::primitive_attr attr = attr_with_post_ops(node().attr<graph::LinearAttrs>().post);
    const std::vector<float> out_scales = scaled(w_scales_, in_.scale);
    attr.set_output_scales(1 << 1, out_scales);
    ip_fwd::primitive_desc pd(ip_fwd::desc(prop_kind::forward_inference, src_, w_any_, b_md_, dst_),
                              attr, cpu_engine());
    if (!weights_) weights_ = owned(pd.weights_desc());
    quantize_into(memory_over(w_plain_, w), weights_, 1 << 0, w_scales_);
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, memory_over(src_, in(0).data)},
                                                  {DNNL_ARG_WEIGHTS, weights_},
                                                  {DNNL_ARG_DST, memory_over(dst_, out().data)}};
    if (has_bias()) {
      bias_ = divided(in(2).data, out_scales);
      args[DNNL_ARG_BIAS] = memory_over(b_md_, bias_);
    }
    ip_ = bind<ip_fwd>(pd, std::move(args));
  }

  Int8Encoding in_;
  dnnl::memory::desc src_, dst_;  // the rows of [B, ..., in] and [B, ..., out] as matrices
  dnnl::memory::desc w_plain_, w_any_, b_md_;
  std::vector<float> w_scales_;
  dnnl::memory weights_;
  Tensor bias_;
  BoundPrimitive ip_;
  std::uint64_t seen_ = ~0ULL;
};

std::unique_ptr<Kernel> fast_linear(KernelIO io, LayoutConverter& converter) {
  if (io.int8 && io.inputs[0]->int8.scale > 0.0f)
    return std::make_unique<DnnlLinearInt8>(std::move(io), converter);
  if (io.int8)
    for (Slot*& in : io.inputs)
      if (is_int8(in->md)) in = converter.to_plain(in);
  if (io.bf16) return std::make_unique<DnnlLinearBf16>(std::move(io), converter);
  return std::make_unique<DnnlLinear>(std::move(io), converter);
}

class RefLinear final : public Kernel {
 public:
  explicit RefLinear(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool training, std::uint64_t) override {
    ops::linear_forward(in(0).data, in(1).data, has_bias() ? &in(2).data : nullptr, out().data);
    if (post().any()) {
      require_inference(training);
      ops::apply_post_ops(post(), nullptr, out().data);
    }
  }
  void backward() override {
    ops::linear_backward(in(0).data, in(1).data, out().grad, grad_of(0).tensor,
                         grad_of(1).tensor, has_bias() ? grad_of(2).tensor : nullptr);
  }

 private:
  bool has_bias() const { return io_.inputs.size() > 2; }
  const graph::PostOps& post() const { return node().attr<graph::LinearAttrs>().post; }
};

}  // namespace

const OpKernels op_kernel_defs::kLinear{fast_linear, reference_kernel<RefLinear>, /*int8=*/true,
                                        /*backward_reads_output=*/false};

}  // namespace telar::backend::cpu
