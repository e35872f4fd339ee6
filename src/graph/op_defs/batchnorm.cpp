// BatchNorm2d: x[B,C,H,W], gamma[C], beta[C], running_mean[C], running_var[C] -> x's shape;
// inference graphs may give it a ReLU post-op (optimize/fuse_activation).
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  const auto& a = c.attr<BatchNormAttrs>();
  c.arity(5, 5);
  c.rank(0, 4, "N x C x H x W");
  if (c.in(0).shape[1] != a.channels)
    c.bad(fmt::format("input has {} channels, expected {}", c.in(0).shape[1], a.channels));
  for (std::size_t i = 1; i < 5; ++i) c.shape_is(i, {a.channels});
  if (a.post.sum || (a.post.activation != OpKind::Count && a.post.activation != OpKind::ReLU))
    c.bad("a BatchNorm2d's only post-op is a ReLU");
  return {c.in(0).shape, DType::F32};
}

std::string describe(const Node& n) {
  const auto& a = n.attr<BatchNormAttrs>();
  return fmt::format("{}", a.channels) + describe_post_ops(a.post);
}

}  // namespace

const OpDef kBatchNorm2d{.name = "BatchNorm2d",
                         .kernels = KernelFamily::BatchNorm2d,
                         .infer = infer,
                         .describe = describe,
                         .channels = per_channel};

}  // namespace telar::graph::op_defs
