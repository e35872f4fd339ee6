#include <optional>

#include "optimize/passes.hpp"

namespace telar::optimize {

namespace {

using graph::NodeId;
using graph::OpKind;
using graph::ValueId;

// The ReduceMean over the last axis that makes `v`, read by nothing else; null otherwise.
const graph::Node* mean_over_last_axis(const graph::Graph& g, ValueId v) {
  const graph::Node* mean = sole_producer(g, v, OpKind::ReduceMean);
  if (!mean) return nullptr;
  const auto rank = static_cast<std::int64_t>(g.value(mean->inputs.at(0)).shape.size());
  return mean->attr<graph::ReduceAttrs>().axis == rank - 1 ? mean : nullptr;
}

// Add(Mul(Div(d, Sqrt(Add(ReduceMean(d * d), eps))), scale), bias) with d = Sub(x,
// ReduceMean(x)), the means over the last axis, scale and bias weights of one value per feature
// (either operand order of the last Add and Mul, and of the epsilon's Add), d read by the
// square and the Div alone and every other inner result by its one reader.
std::optional<Chain> layer_norm_ending_at(const graph::Graph& g, const graph::ParameterSet& params,
                                          const graph::Node& last) {
  if (last.kind != OpKind::Add) return {};
  const std::int64_t features = g.value(last.outputs.at(0)).shape.back();
  for (std::size_t i = 0; i < 2; ++i) {
    const graph::Node* scaled = sole_producer(g, last.inputs[i], OpKind::Mul);
    if (!scaled || !weight_vector(g, params, last.inputs[1 - i], features)) continue;
    for (std::size_t j = 0; j < 2; ++j) {
      const graph::Node* div = sole_producer(g, scaled->inputs[j], OpKind::Div);
      if (!div || !weight_vector(g, params, scaled->inputs[1 - j], features)) continue;
      const graph::Node* sqrt = sole_producer(g, div->inputs.at(1), OpKind::Sqrt);
      const graph::Node* shifted =
          sqrt ? sole_producer(g, sqrt->inputs.at(0), OpKind::Add) : nullptr;
      if (!shifted) continue;
      for (std::size_t k = 0; k < 2; ++k) {
        const std::optional<float> eps = scalar_constant(g, params, shifted->inputs[1 - k]);
        const graph::Node* variance = mean_over_last_axis(g, shifted->inputs[k]);
        if (!eps || !(*eps > 0.0f) || !variance) continue;
        const graph::Node* square = sole_producer(g, variance->inputs.at(0), OpKind::Mul);
        const ValueId d = div->inputs.at(0);
        if (!square || square->inputs.at(0) != d || square->inputs.at(1) != d) continue;
        const graph::Value& dv = g.value(d);
        if (dv.producer < 0 || g.consumers(d) != std::vector<NodeId>{square->id, div->id} ||
            is_graph_output(g, d))
          continue;
        const graph::Node& centre = g.node(dv.producer);
        if (centre.kind != OpKind::Sub) continue;
        const graph::Node* mean = mean_over_last_axis(g, centre.inputs.at(1));
        // x has the norm's shape (neither the weights nor epsilon broadcast it further).
        if (!mean || mean->inputs.at(0) != centre.inputs.at(0) ||
            g.value(centre.inputs.at(0)).shape != g.value(last.outputs.at(0)).shape)
          continue;
        graph::LayerNormAttrs a;
        a.features = features;
        a.eps = *eps;
        return Chain{OpKind::LayerNorm,
                     a,
                     {centre.inputs.at(0), scaled->inputs[1 - j], last.inputs[1 - i]},
                     {mean->id, centre.id, square->id, variance->id, shifted->id, sqrt->id, div->id,
                      scaled->id}};
      }
    }
  }
  return {};
}

}  // namespace

Rewritten fuse_layer_norm(const graph::Graph& graph, const graph::ParameterSet& params) {
  return fuse_chains(graph, params, [&](const graph::Node& last) {
    return layer_norm_ending_at(graph, params, last);
  });
}

}  // namespace telar::optimize
