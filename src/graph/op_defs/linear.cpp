// Linear over the last axis: x[B, ..., in], weight[out, in], bias[out] (optional) ->
// [B, ..., out]: an image classifier's [B, in], a transformer's tokens [B, L, in], ConvNeXt's
// channels-last pixels [B, H, W, in] (one row per leading index).
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  const auto& a = c.attr<LinearAttrs>();
  c.arity(a.bias ? 3 : 2, a.bias ? 3 : 2);
  const Shape& x = c.in(0).shape;
  if (x.size() < 2)
    c.bad(
        fmt::format("input '{}' has shape {}, expected the batch, then features (or rows of "
                    "them: [B, ..., features])",
                    c.in(0).name, shape_str(x)));
  c.dtype(0, DType::F32);
  const auto width = x.back();
  if (width != a.in_features)
    c.bad(
        fmt::format("input width {} does not match in_features {}; the previous layer must "
                    "produce {} features{}",
                    width, a.in_features, a.in_features,
                    x.size() == 4 ? " (a Linear acts on the last axis: Flatten an image "
                                    "[B, C, H, W] first)"
                                  : ""));
  c.shape_is(1, {a.out_features, a.in_features});
  if (a.bias) c.shape_is(2, {a.out_features});
  if (a.post.sum) c.bad("a Linear's post-ops cannot sum (only a Conv2d's can)");
  Shape out = x;
  out.back() = a.out_features;
  check_post_ops(c, a.post, c.count(), out);
  return {std::move(out), DType::F32};
}

// One multiply-add per output element and input feature.
void cost(const Graph& g, const Node& n, const CostOptions& o, NodeCost& c) {
  c.macs = numel_at(g, n.outputs.at(0), o.batch) * n.attr<LinearAttrs>().in_features;
}

std::string describe(const Node& n) {
  const auto& a = n.attr<LinearAttrs>();
  return fmt::format("{}->{}{}{}", a.in_features, a.out_features, a.bias ? "" : " nobias",
                     describe_post_ops(a.post));
}

// A fused residual sum (post.sum) adds a summand whose channels this does not trace; over rows
// ([B, L, in]) the features are not axis 1, where channel groups are traced.
ChannelFlow channels(const Graph& g, const Node& n) {
  if (g.value(n.inputs.at(0)).shape.size() != 2) return ChannelFlow::Opaque;
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
