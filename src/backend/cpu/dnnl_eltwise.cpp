#include "backend/cpu/dnnl_eltwise.hpp"

#include "core/error.hpp"

namespace telar::backend::cpu {

using dnnl::algorithm;

std::optional<EltwiseAlgorithm> dnnl_eltwise(graph::OpKind kind, const graph::EltwiseAttrs& attrs) {
  switch (kind) {
    case graph::OpKind::ReLU:
      return EltwiseAlgorithm{algorithm::eltwise_relu};
    case graph::OpKind::ReLU6:
      return EltwiseAlgorithm{algorithm::eltwise_clip_v2, 0.0f, 6.0f};
    case graph::OpKind::Sigmoid:
      return EltwiseAlgorithm{algorithm::eltwise_logistic};
    case graph::OpKind::Tanh:
      return EltwiseAlgorithm{algorithm::eltwise_tanh};
    case graph::OpKind::LeakyReLU:
      return EltwiseAlgorithm{algorithm::eltwise_relu, attrs.alpha};
    case graph::OpKind::HardSwish:
      return EltwiseAlgorithm{algorithm::eltwise_hardswish};
    case graph::OpKind::SiLU:  // oneDNN's swish is x * sigmoid(alpha * x)
      return EltwiseAlgorithm{algorithm::eltwise_swish, 1.0f};
    case graph::OpKind::GELU:
      return EltwiseAlgorithm{algorithm::eltwise_gelu_erf};
    case graph::OpKind::Sqrt:
      return EltwiseAlgorithm{algorithm::eltwise_sqrt};
    case graph::OpKind::Pow:  // oneDNN's pow is alpha * x^beta
      return EltwiseAlgorithm{algorithm::eltwise_pow, 1.0f, attrs.alpha};
    default:
      return std::nullopt;
  }
}

void append_activation(dnnl::post_ops& ops, const graph::PostOps& post) {
  if (post.activation == graph::OpKind::Count) return;
  const auto e = dnnl_eltwise(post.activation, post.eltwise);
  if (!e) fail("internal: oneDNN has no eltwise post-op for {}", graph::op_name(post.activation));
  ops.append_eltwise(1.0f, e->algorithm, e->alpha, e->beta);
}

dnnl::primitive_attr attr_with_post_ops(const graph::PostOps& post) {
  dnnl::primitive_attr attr = default_attr();
  if (!post.any()) return attr;
  dnnl::post_ops ops;
  if (post.sum) ops.append_sum(1.0f);
  append_activation(ops, post);
  attr.set_post_ops(ops);
  return attr;
}

}  // namespace telar::backend::cpu
