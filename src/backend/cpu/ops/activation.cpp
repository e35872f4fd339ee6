// The element-wise activations on oneDNN eltwise, in the layout of the input; HardSigmoid and
// Erf (which oneDNN 2.6 lacks) on the reference kernel.
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

using dnnl::algorithm;
using dnnl::prop_kind;
using elt_fwd = dnnl::eltwise_forward;
using elt_bwd = dnnl::eltwise_backward;

class DnnlEltwise final : public DnnlKernel {
 public:
  DnnlEltwise(KernelIO io, LayoutConverter&) : DnnlKernel(std::move(io)) {
    md_ = in(0).md;
    define_output(md_, in(0).plain);
    switch (node().kind) {
      case graph::OpKind::ReLU: alg_ = algorithm::eltwise_relu; break;
      case graph::OpKind::ReLU6:
        alg_ = algorithm::eltwise_clip_v2;
        beta_ = 6.0f;
        break;
      case graph::OpKind::Sigmoid: alg_ = algorithm::eltwise_logistic; break;
      case graph::OpKind::LeakyReLU:
        alg_ = algorithm::eltwise_relu;
        alpha_ = node().attr<graph::EltwiseAttrs>().alpha;
        break;
      case graph::OpKind::HardSwish: alg_ = algorithm::eltwise_hardswish; break;
      case graph::OpKind::Sqrt: alg_ = algorithm::eltwise_sqrt; break;
      default: alg_ = algorithm::eltwise_tanh; break;
    }
  }

  void forward(bool training, std::uint64_t) override {
    BoundPrimitive& p = training ? train_ : infer_;
    if (!p.ready()) {
      auto pd = make_fwd(training ? prop_kind::forward_training : prop_kind::forward_inference);
      p = bind<elt_fwd>(pd, {{DNNL_ARG_SRC, in(0).data_memory()}, {DNNL_ARG_DST, out().data_memory()}});
    }
    p.run();
  }

  void prepare_backward() override {
    if (!grad_of(0).tensor) return;
    elt_bwd::primitive_desc pd(elt_bwd::desc(alg_, md_, md_, alpha_, beta_), default_attr(),
                               cpu_engine(), make_fwd(prop_kind::forward_training));
    bwd_ = bind<elt_bwd>(pd, {{DNNL_ARG_SRC, in(0).data_memory()},
                              {DNNL_ARG_DIFF_DST, out().grad_memory()},
                              {DNNL_ARG_DIFF_SRC, memory_over(md_, *grad_of(0).tensor)}});
  }

  void backward() override {
    if (bwd_.ready()) bwd_.run();
  }

 private:
  elt_fwd::primitive_desc make_fwd(prop_kind kind) const {
    return elt_fwd::primitive_desc(elt_fwd::desc(kind, alg_, md_, alpha_, beta_), default_attr(),
                                   cpu_engine());
  }
  algorithm alg_ = algorithm::eltwise_relu;
  float alpha_ = 0.0f, beta_ = 0.0f;
  dnnl::memory::desc md_;
  BoundPrimitive train_, infer_, bwd_;
};

std::unique_ptr<Kernel> fast_eltwise(KernelIO io, LayoutConverter& converter) {
  if (io.node->kind == graph::OpKind::HardSigmoid || io.node->kind == graph::OpKind::Erf)
    return nullptr;
  return fast_kernel<DnnlEltwise>(std::move(io), converter);
}

ops::Activation activation_of(graph::OpKind kind) {
  switch (kind) {
    case graph::OpKind::ReLU: return ops::Activation::ReLU;
    case graph::OpKind::ReLU6: return ops::Activation::ReLU6;
    case graph::OpKind::Sigmoid: return ops::Activation::Sigmoid;
    case graph::OpKind::LeakyReLU: return ops::Activation::LeakyReLU;
    case graph::OpKind::HardSigmoid: return ops::Activation::HardSigmoid;
    case graph::OpKind::HardSwish: return ops::Activation::HardSwish;
    case graph::OpKind::Sqrt: return ops::Activation::Sqrt;
    case graph::OpKind::Erf: return ops::Activation::Erf;
    default: return ops::Activation::Tanh;
  }
}

ops::ActivationParams params_of(const graph::Node& node) {
  if (const auto* a = std::get_if<graph::EltwiseAttrs>(&node.attrs)) return {a->alpha, a->beta};
  return {};
}

class RefActivation final : public Kernel {
 public:
  explicit RefActivation(KernelIO io)
      : Kernel(std::move(io)), kind_(activation_of(node().kind)), params_(params_of(node())) {
    define_plain_output();
  }
  void forward(bool, std::uint64_t) override {
    ops::activation_forward(kind_, in(0).data, out().data, params_);
  }
  void backward() override {
    if (grad_of(0).tensor)
      ops::activation_backward(kind_, in(0).data, out().data, out().grad, *grad_of(0).tensor,
                              params_);
  }

 private:
  ops::Activation kind_;
  ops::ActivationParams params_;
};

}  // namespace

const OpKernels op_kernel_defs::kActivation{fast_eltwise,
                                             reference_kernel<RefActivation>};

}  // namespace telar::backend::cpu
