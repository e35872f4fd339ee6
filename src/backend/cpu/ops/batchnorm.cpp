// BatchNorm2d on oneDNN batch normalization, in the layout of its input. oneDNN returns the
// batch statistics; the running statistics are updated here (PyTorch's rule: unbiased
// variance, momentum as in BatchNormAttrs).
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

using dnnl::prop_kind;
using flags = dnnl::normalization_flags;
using md = dnnl::memory::desc;
using bn_fwd = dnnl::batch_normalization_forward;
using bn_bwd = dnnl::batch_normalization_backward;

class DnnlBatchNorm final : public DnnlKernel {
 public:
  DnnlBatchNorm(KernelIO io, LayoutConverter&) : DnnlKernel(std::move(io)) {
    data_md_ = in(0).md;
    define_output(data_md_, in(0).plain);
    const auto c = in(0).shape[1];
    stat_md_ = plain_f32({c});
    mean_ = owned(stat_md_);
    variance_ = owned(stat_md_);
  }

  void forward(bool training, std::uint64_t) override {
    const auto& a = node().attr<graph::BatchNormAttrs>();
    if (!training) {
      if (!infer_.ready()) {
        // A ReLU post-op (inference graphs): oneDNN's fused ReLU.
        const flags relu =
            a.post.activation == graph::OpKind::ReLU ? flags::fuse_norm_relu : flags::none;
        bn_fwd::primitive_desc pd(
            bn_fwd::desc(prop_kind::forward_inference, data_md_, a.eps,
                         flags::use_global_stats | flags::use_scale | flags::use_shift | relu),
            default_attr(), cpu_engine());
        infer_ = bind<bn_fwd>(pd, {{DNNL_ARG_SRC, in(0).data_memory()},
                                   {DNNL_ARG_SCALE, in(1).data_memory()},
                                   {DNNL_ARG_SHIFT, in(2).data_memory()},
                                   {DNNL_ARG_MEAN, in(3).data_memory()},
                                   {DNNL_ARG_VARIANCE, in(4).data_memory()},
                                   {DNNL_ARG_DST, out().data_memory()}});
      }
      infer_.run();
      return;
    }
    if (a.post.any()) require_inference(training);
    if (!train_.ready()) make_train();
    train_.run();
    update_running_statistics(a);
  }

  void prepare_backward() override {
    if (!train_.ready()) make_train();
    const auto& a = node().attr<graph::BatchNormAttrs>();
    bn_bwd::primitive_desc pd(
        bn_bwd::desc(prop_kind::backward, data_md_, data_md_, a.eps,
                     flags::use_scale | flags::use_shift),
        default_attr(), cpu_engine(), train_pd_);
    // oneDNN computes all three gradients; the ones nobody needs go to a private buffer.
    auto target = [&](std::size_t i, const md& m) {
      return grad_of(i).tensor ? memory_over(m, *grad_of(i).tensor) : owned(m);
    };
    bwd_ = bind<bn_bwd>(pd, {{DNNL_ARG_SRC, in(0).data_memory()},
                             {DNNL_ARG_MEAN, mean_},
                             {DNNL_ARG_VARIANCE, variance_},
                             {DNNL_ARG_SCALE, in(1).data_memory()},
                             {DNNL_ARG_SHIFT, in(2).data_memory()},
                             {DNNL_ARG_DIFF_DST, out().grad_memory()},
                             {DNNL_ARG_DIFF_SRC, target(0, data_md_)},
                             {DNNL_ARG_DIFF_SCALE, target(1, stat_md_)},
                             {DNNL_ARG_DIFF_SHIFT, target(2, stat_md_)}});
  }

  void backward() override { bwd_.run(); }

 private:
  void make_train() {
    const auto& a = node().attr<graph::BatchNormAttrs>();
    train_pd_ = bn_fwd::primitive_desc(
        bn_fwd::desc(prop_kind::forward_training, data_md_, a.eps,
                     flags::use_scale | flags::use_shift),
        default_attr(), cpu_engine());
    train_ = bind<bn_fwd>(train_pd_, {{DNNL_ARG_SRC, in(0).data_memory()},
                                      {DNNL_ARG_SCALE, in(1).data_memory()},
                                      {DNNL_ARG_SHIFT, in(2).data_memory()},
                                      {DNNL_ARG_MEAN, mean_},
                                      {DNNL_ARG_VARIANCE, variance_},
                                      {DNNL_ARG_DST, out().data_memory()}});
  }

  void update_running_statistics(const graph::BatchNormAttrs& a) {
    const auto& x = in(0).shape;
    const double n = static_cast<double>(x[0] * x[2] * x[3]);
    const float unbias = n > 1 ? static_cast<float>(n / (n - 1)) : 1.0f;
    const float m = a.momentum;
    const float* mean = static_cast<const float*>(mean_.get_data_handle());
    const float* var = static_cast<const float*>(variance_.get_data_handle());
    float* rm = in_mut(3).data.f32();
    float* rv = in_mut(4).data.f32();
    for (std::int64_t c = 0; c < x[1]; ++c) {
      rm[c] = (1 - m) * rm[c] + m * mean[c];
      rv[c] = (1 - m) * rv[c] + m * var[c] * unbias;
    }
  }

  md data_md_, stat_md_;
  dnnl::memory mean_, variance_;
  bn_fwd::primitive_desc train_pd_;
  BoundPrimitive train_, infer_, bwd_;
};

class RefBatchNorm final : public Kernel {
 public:
  explicit RefBatchNorm(KernelIO io) : Kernel(std::move(io)) {
    define_plain_output();
    const auto c = node().attr<graph::BatchNormAttrs>().channels;
    mean_ = Tensor({c});
    inv_std_ = Tensor({c});
  }
  void forward(bool training, std::uint64_t) override {
    const auto& a = node().attr<graph::BatchNormAttrs>();
    if (a.post.any()) require_inference(training);
    if (training) {
      ops::batchnorm_forward_train(a, in(0).data, in(1).data, in(2).data, in_mut(3).data,
                                   in_mut(4).data, out().data, mean_, inv_std_);
    } else {
      ops::batchnorm_forward_eval(a, in(0).data, in(1).data, in(2).data, in(3).data, in(4).data,
                                  out().data);
      ops::apply_post_ops(a.post, nullptr, out().data);
    }
  }
  void backward() override {
    ops::batchnorm_backward(node().attr<graph::BatchNormAttrs>(), in(0).data, in(1).data, mean_,
                            inv_std_, out().grad, grad_of(0).tensor, grad_of(1).tensor,
                            grad_of(2).tensor);
  }

 private:
  Tensor mean_, inv_std_;
};

}  // namespace

const OpKernels op_kernel_defs::kBatchNorm2d{fast_kernel<DnnlBatchNorm>,
                                             reference_kernel<RefBatchNorm>, /*int8=*/false,
                                             /*backward_reads_output=*/false};

}  // namespace telar::backend::cpu
