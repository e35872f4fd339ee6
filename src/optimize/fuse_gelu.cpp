#include <cmath>
#include <optional>

#include "optimize/passes.hpp"

namespace telar::optimize {

namespace {

using graph::NodeId;
using graph::OpKind;
using graph::ValueId;

bool near(std::optional<float> value, float expected) {
  return value && std::fabs(*value - expected) <= 1e-6f * std::fabs(expected);
}

// The GELU whose last node is `last` (the Mul by 0.5), if it is one.
std::optional<Chain> gelu_ending_at(const graph::Graph& g, const graph::ParameterSet& params,
                                    const graph::Node& last) {
  if (last.kind != OpKind::Mul) return {};
  for (std::size_t i = 0; i < 2; ++i) {
    if (!near(scalar_constant(g, params, last.inputs[1 - i]), 0.5f)) continue;
    const graph::Node* gated = sole_producer(g, last.inputs[i], OpKind::Mul);
    if (!gated) continue;
    for (std::size_t j = 0; j < 2; ++j) {
      const ValueId x = gated->inputs[1 - j];
      const graph::Node* plus_one = sole_producer(g, gated->inputs[j], OpKind::Add);
      if (!plus_one) continue;
      for (std::size_t k = 0; k < 2; ++k) {
        if (!near(scalar_constant(g, params, plus_one->inputs[1 - k]), 1.0f)) continue;
        const graph::Node* erf = sole_producer(g, plus_one->inputs[k], OpKind::Erf);
        if (!erf) continue;
        const graph::Node* scaled = sole_producer(g, erf->inputs.at(0), OpKind::Div);
        if (!scaled || scaled->inputs.at(0) != x ||
            !near(scalar_constant(g, params, scaled->inputs.at(1)), std::sqrt(2.0f)))
          continue;
        return Chain{OpKind::GELU, {}, {x}, {scaled->id, erf->id, plus_one->id, gated->id}};
      }
    }
  }
  return {};
}

}  // namespace

Rewritten fuse_gelu(const graph::Graph& graph, const graph::ParameterSet& params) {
  return fuse_chains(graph, params,
                     [&](const graph::Node& last) { return gelu_ending_at(graph, params, last); });
}

}  // namespace telar::optimize
