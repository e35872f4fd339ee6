// LayerNorm: x[B, ..., W], scale[W], bias[W] -> x's shape, each row of the last axis normalised
// by its own mean and (biased) variance: (x - mean) / sqrt(var + eps) * scale + bias (a
// transformer's norms over a token's features, ConvNeXt's over a pixel's channels).
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  const auto& a = c.attr<LayerNormAttrs>();
  c.arity(3, 3);
  for (std::size_t i = 0; i < 3; ++i) c.dtype(i, DType::F32);
  const Shape& x = c.in(0).shape;
  if (x.size() < 2) c.bad("the input needs an axis after the batch");
  if (x.back() != a.features)
    c.bad(fmt::format("the last axis of {} has {} elements, expected {} features", shape_str(x),
                      x.back(), a.features));
  if (!(a.eps > 0.0f)) c.bad(fmt::format("epsilon {} is not positive", a.eps));
  c.shape_is(1, {a.features});
  c.shape_is(2, {a.features});
  return {x, DType::F32};
}

// Per element: the two sums of the statistics, then a subtraction, a multiplication and an
// addition.
void cost(const Graph& g, const Node& n, const CostOptions& o, NodeCost& c) {
  c.macs = 3 * numel_at(g, n.inputs.at(0), o.batch);
}

std::string describe(const Node& n) {
  const auto& a = n.attr<LayerNormAttrs>();
  return fmt::format("{} eps {:g}", a.features, a.eps);
}

}  // namespace

// Channels (dimension 1) are not followed through it: a [B, C] input is normalised over the
// channels (pruning one changes every other's statistics), and its weights run along the last
// axis, not dimension 1.
const OpDef kLayerNorm{.name = "LayerNorm",
                       .kernels = KernelFamily::LayerNorm,
                       .infer = infer,
                       .cost = cost,
                       .describe = describe};

}  // namespace telar::graph::op_defs
