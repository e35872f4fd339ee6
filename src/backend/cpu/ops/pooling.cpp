// MaxPool2d, AvgPool2d and GlobalAvgPool on oneDNN pooling; they run in whatever layout
// their input arrives in (no reorders between convolutions and pools).
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

using dnnl::algorithm;
using dnnl::prop_kind;
using md = dnnl::memory::desc;
using pool_fwd = dnnl::pooling_v2_forward;
using pool_bwd = dnnl::pooling_v2_backward;

class DnnlPool final : public DnnlKernel {
 public:
  DnnlPool(KernelIO io, LayoutConverter& converter) : DnnlKernel(std::move(io)) {
    const auto& x = in(0).shape;
    const auto f32 = dnnl::memory::data_type::f32;
    const bool global = node().kind == graph::OpKind::GlobalAvgPool;
    // Its plain f32 output is the features a Linear reads: a bf16 input is widened first.
    if (global && in(0).md.data_type() != f32) io_.inputs[0] = converter.to_plain(io_.inputs[0]);
    src_md_ = in(0).md;
    if (global) {
      alg_ = algorithm::pooling_avg_include_padding;
      kernel_ = {x[2], x[3]};
      strides_ = {1, 1};
      pad_l_ = pad_r_ = {0, 0};
      // The [B,C,1,1] destination takes the input's layout where that is the memory layout of
      // the plain [B,C] output (channels-last, or channel blocks that divide C): oneDNN's jit
      // pooling wants the two alike, and runs its reference kernel (30x slower) otherwise.
      dst_md_ = md({x[0], x[1], 1, 1}, f32, dnnl::memory::format_tag::nchw);
      using tag = dnnl::memory::format_tag;
      for (tag t : {tag::nhwc, tag::nChw16c, tag::nChw8c}) {
        const md same({x[0], x[1], 1, 1}, f32, t);
        if (src_md_ == md(to_dims(x), f32, t) && same.get_size() == dst_md_.get_size())
          dst_md_ = same;
      }
      define_plain_output();
    } else {
      const auto& a = node().attr<graph::Pool2dAttrs>();
      const auto& y = out().shape;
      alg_ = node().kind == graph::OpKind::MaxPool2d ? algorithm::pooling_max
             : a.count_include_pad                   ? algorithm::pooling_avg_include_padding
                                                     : algorithm::pooling_avg_exclude_padding;
      kernel_ = {a.kernel_h, a.kernel_w};
      strides_ = {a.stride_h, a.stride_w};
      pad_l_ = {a.pad_h, a.pad_w};
      pad_r_ = {padding_right(x[2], y[2], a.kernel_h, a.stride_h, a.pad_h),
                padding_right(x[3], y[3], a.kernel_w, a.stride_w, a.pad_w)};
      auto pd = make_fwd(prop_kind::forward_inference,
                         md(to_dims(y), src_md_.data_type(), dnnl::memory::format_tag::any));
      dst_md_ = pd.dst_desc();
      define_output(dst_md_, is_plain(dst_md_, y));
      // Pooling keeps an int8 input's encoding: a maximum or mean of q in its scale.
      if (is_int8(src_md_)) out().int8 = in(0).int8;
    }
  }

  void forward(bool training, std::uint64_t) override {
    BoundPrimitive& p = training ? train_ : infer_;
    if (!p.ready()) {
      auto pd = make_fwd(training ? prop_kind::forward_training : prop_kind::forward_inference,
                         dst_md_);
      std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, in(0).data_memory()},
                                                    {DNNL_ARG_DST, memory_over(dst_md_, out().data)}};
      if (training && pd.workspace_desc().get_size() > 0) {
        workspace_ = owned(pd.workspace_desc());
        args[DNNL_ARG_WORKSPACE] = workspace_;
      }
      if (training) train_pd_ = pd;
      p = bind<pool_fwd>(pd, std::move(args));
    }
    p.run();
  }

  void prepare_backward() override {
    if (!grad_of(0).tensor) return;
    if (!train_.ready()) forward_training_resources();
    pool_bwd::primitive_desc pd(
        pool_bwd::desc(alg_, src_md_, dst_md_, strides_, kernel_, {0, 0}, pad_l_, pad_r_),
        default_attr(), cpu_engine(), train_pd_);
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_DIFF_DST, memory_over(dst_md_, out().grad)},
        {DNNL_ARG_DIFF_SRC, memory_over(src_md_, *grad_of(0).tensor)}};
    if (workspace_) args[DNNL_ARG_WORKSPACE] = workspace_;
    bwd_ = bind<pool_bwd>(pd, std::move(args));
  }

  void backward() override {
    if (bwd_.ready()) bwd_.run();
  }

 private:
  pool_fwd::primitive_desc make_fwd(prop_kind kind, const md& dst) {
    return pool_fwd::primitive_desc(
        pool_fwd::desc(kind, alg_, src_md_, dst, strides_, kernel_, {0, 0}, pad_l_, pad_r_),
        default_attr(), cpu_engine());
  }
  void forward_training_resources() {
    // Backward needs the training forward's descriptor (and max pooling its workspace).
    auto pd = make_fwd(prop_kind::forward_training, dst_md_);
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, in(0).data_memory()},
                                                  {DNNL_ARG_DST, memory_over(dst_md_, out().data)}};
    if (pd.workspace_desc().get_size() > 0) {
      workspace_ = owned(pd.workspace_desc());
      args[DNNL_ARG_WORKSPACE] = workspace_;
    }
    train_pd_ = pd;
    train_ = bind<pool_fwd>(pd, std::move(args));
  }

  algorithm alg_;
  dnnl::memory::dims kernel_, strides_, pad_l_, pad_r_;
  md src_md_, dst_md_;
  pool_fwd::primitive_desc train_pd_;
  dnnl::memory workspace_;
  BoundPrimitive train_, infer_, bwd_;
};

class RefMaxPool final : public Kernel {
 public:
  explicit RefMaxPool(KernelIO io) : Kernel(std::move(io)) {
    define_plain_output();
    argmax_ = Tensor(out().shape, DType::I32);
  }
  void forward(bool, std::uint64_t) override {
    ops::maxpool2d_forward(node().attr<graph::Pool2dAttrs>(), in(0).data, out().data, argmax_);
  }
  void backward() override {
    if (grad_of(0).tensor)
      ops::maxpool2d_backward(node().attr<graph::Pool2dAttrs>(), argmax_, out().grad,
                              *grad_of(0).tensor);
  }

 private:
  Tensor argmax_;
};

class RefAvgPool final : public Kernel {
 public:
  explicit RefAvgPool(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override {
    ops::avgpool2d_forward(node().attr<graph::Pool2dAttrs>(), in(0).data, out().data);
  }
  void backward() override {
    if (grad_of(0).tensor)
      ops::avgpool2d_backward(node().attr<graph::Pool2dAttrs>(), out().grad, *grad_of(0).tensor);
  }
};

class RefGlobalAvgPool final : public Kernel {
 public:
  explicit RefGlobalAvgPool(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override { ops::global_avgpool_forward(in(0).data, out().data); }
  void backward() override {
    if (grad_of(0).tensor) ops::global_avgpool_backward(out().grad, *grad_of(0).tensor);
  }
};

}  // namespace

const OpKernels op_kernel_defs::kMaxPool2d{fast_kernel<DnnlPool>, reference_kernel<RefMaxPool>,
                                           /*int8=*/true};
const OpKernels op_kernel_defs::kAvgPool2d{fast_kernel<DnnlPool>, reference_kernel<RefAvgPool>,
                                           /*int8=*/true};
const OpKernels op_kernel_defs::kGlobalAvgPool{fast_kernel<DnnlPool>,
                                                reference_kernel<RefGlobalAvgPool>};

}  // namespace telar::backend::cpu
