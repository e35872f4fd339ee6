// The element-wise activations on oneDNN eltwise, in the layout of the input; HardSigmoid and
// Erf (which oneDNN 2.6 lacks) on the reference kernel. A training plan's ReLU or ReLU6 writes
// over its input where that input is its alone (Slot::overwritable, e.g. BatchNorm's output):
// its backward then tells where the gradient passes from the output, which is in (0, 6) (ReLU:
// positive) exactly where the input was.
#include <optional>

#include "backend/cpu/dnnl_eltwise.hpp"
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

using dnnl::algorithm;
using dnnl::prop_kind;
using elt_fwd = dnnl::eltwise_forward;
using elt_bwd = dnnl::eltwise_backward;

class DnnlEltwise final : public DnnlKernel {
 public:
  DnnlEltwise(KernelIO io, LayoutConverter&, EltwiseAlgorithm e)
      : DnnlKernel(std::move(io)), alg_(e.algorithm), alpha_(e.alpha), beta_(e.beta) {
    md_ = in(0).md;
    const auto from_output = in(0).overwritable ? in_place_algorithm() : std::nullopt;
    if (from_output) {
      alg_ = *from_output;
      in_place_ = true;
      out().md = md_;
      out().plain = in(0).plain;
      out().data = in(0).data;
    } else {
      define_output(md_, in(0).plain);
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
    // In place, the input's storage holds the output.
    bwd_ = bind<elt_bwd>(pd, {{in_place_ ? DNNL_ARG_DST : DNNL_ARG_SRC, in(0).data_memory()},
                              {DNNL_ARG_DIFF_DST, out().grad_memory()},
                              {DNNL_ARG_DIFF_SRC, memory_over(md_, *grad_of(0).tensor)}});
  }

  void backward() override {
    if (bwd_.ready()) bwd_.run();
  }

 private:
  // The algorithm whose backward reads the output instead of the input, for the activations
  // whose output tells where their gradient passes.
  std::optional<algorithm> in_place_algorithm() const {
    if (alg_ == algorithm::eltwise_relu && alpha_ == 0.0f)
      return algorithm::eltwise_relu_use_dst_for_bwd;
    if (alg_ == algorithm::eltwise_clip_v2) return algorithm::eltwise_clip_v2_use_dst_for_bwd;
    return std::nullopt;
  }
  elt_fwd::primitive_desc make_fwd(prop_kind kind) const {
    return elt_fwd::primitive_desc(elt_fwd::desc(kind, alg_, md_, alpha_, beta_), default_attr(),
                                   cpu_engine());
  }
  algorithm alg_;
  float alpha_, beta_;
  dnnl::memory::desc md_;
  bool in_place_ = false;
  BoundPrimitive train_, infer_, bwd_;
};

std::unique_ptr<Kernel> fast_eltwise(KernelIO io, LayoutConverter& converter) {
  const graph::EltwiseAttrs* attrs = std::get_if<graph::EltwiseAttrs>(&io.node->attrs);
  const auto e = dnnl_eltwise(io.node->kind, attrs ? *attrs : graph::EltwiseAttrs{});
  if (!e) return nullptr;
  return std::make_unique<DnnlEltwise>(std::move(io), converter, *e);
}

ops::ActivationParams params_of(const graph::Node& node) {
  if (const auto* a = std::get_if<graph::EltwiseAttrs>(&node.attrs)) return {a->alpha, a->beta};
  return {};
}

class RefActivation final : public Kernel {
 public:
  explicit RefActivation(KernelIO io)
      : Kernel(std::move(io)), kind_(ops::activation_of(node().kind)), params_(params_of(node())) {
    if ((kind_ == ops::Activation::ReLU || kind_ == ops::Activation::ReLU6) && in(0).overwritable) {
      // In place: backward's x is the output, in (0, 6) (ReLU: positive) where x was.
      out().md = in(0).md;
      out().plain = true;
      out().data = in(0).data;
    } else {
      define_plain_output();
    }
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
