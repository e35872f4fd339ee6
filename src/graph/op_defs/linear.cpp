// Linear: x[B,in], weight[out,in], bias[out] (optional) -> [B,out].
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  const auto& a = c.attr<LinearAttrs>();
  c.arity(a.bias ? 3 : 2, a.bias ? 3 : 2);
  c.rank(0, 2, "batch x features");
  c.dtype(0, DType::F32);
  const auto width = c.in(0).shape[1];
  if (width != a.in_features)
    c.bad(
        fmt::format("input width {} does not match in_features {}; the previous layer must "
                    "produce {} features",
                    width, a.in_features, a.in_features));
  c.shape_is(1, {a.out_features, a.in_features});
  if (a.bias) c.shape_is(2, {a.out_features});
  if (a.post.sum) c.bad("a Linear's post-ops cannot sum (only a Conv2d's can)");
  Shape out{c.in(0).shape[0], a.out_features};
  check_post_ops(c, a.post, c.count(), out);
  return {std::move(out), DType::F32};
}

void cost(const Graph&, const Node& n, const CostOptions& o, NodeCost& c) {
  const auto& a = n.attr<LinearAttrs>();
  c.macs = o.batch * a.in_features * a.out_features;
}

std::string describe(const Node& n) {
  const auto& a = n.attr<LinearAttrs>();
  return fmt::format("{}->{}{}{}", a.in_features, a.out_features, a.bias ? "" : " nobias",
                     describe_post_ops(a.post));
}

// A fused residual sum (post.sum) adds a summand whose channels this does not trace.
ChannelFlow channels(const Graph&, const Node& n) {
  return n.attr<LinearAttrs>().post.sum ? ChannelFlow::Opaque : ChannelFlow::Mix;
}

}  // namespace

const OpDef kLinear{.name = "Linear",
                    .kernels = KernelFamily::Linear,
                    .infer = infer,
                    .cost = cost,
                    .describe = describe,
                    .lowering = Lowering::Gemm,
                    .channels = channels};

}  // namespace telar::graph::op_defs
