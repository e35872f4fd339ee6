#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "optimize/passes.hpp"

namespace telar::optimize {

namespace {

using graph::NodeId;
using graph::OpKind;
using graph::ValueId;

// The value of a one-element constant (a weight or buffer with its tensor); none otherwise.
std::optional<float> scalar_constant(const graph::Graph& g, const graph::ParameterSet& params,
                                     ValueId id) {
  const graph::Value& v = g.value(id);
  if (v.kind != graph::ValueKind::Parameter && v.kind != graph::ValueKind::Buffer) return {};
  if (!params.has(id) || params.at(id).numel() != 1) return {};
  return params.at(id).f32()[0];
}

bool near(std::optional<float> value, float expected) {
  return value && std::fabs(*value - expected) <= 1e-6f * std::fabs(expected);
}

// The node that makes `value`, when `value` is read by nothing but its one reader and the node
// is of `kind`; null otherwise.
const graph::Node* sole_producer(const graph::Graph& g, ValueId value, OpKind kind) {
  const graph::Value& v = g.value(value);
  if (v.producer < 0 || !read_only_by_one(g, value)) return nullptr;
  const graph::Node& n = g.node(v.producer);
  return n.kind == kind ? &n : nullptr;
}

// One GELU as PyTorch exports it: Mul(Mul(x, Add(Erf(Div(x, sqrt(2))), 1)), 0.5).
struct Gelu {
  ValueId x = graph::kNoValue;
  std::vector<NodeId> inner;  // Div, Erf, Add and the first Mul: dropped
};

// The GELU whose last node is `last` (the Mul by 0.5), if it is one.
std::optional<Gelu> gelu_ending_at(const graph::Graph& g, const graph::ParameterSet& params,
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
        return Gelu{x, {scaled->id, erf->id, plus_one->id, gated->id}};
      }
    }
  }
  return {};
}

}  // namespace

Rewritten fuse_gelu(const graph::Graph& graph, const graph::ParameterSet& params) {
  std::map<NodeId, ValueId> last_of;  // the Mul by 0.5 of each GELU, with the GELU's input
  std::set<NodeId> dropped;
  for (const graph::Node& n : graph.nodes())
    if (const std::optional<Gelu> gelu = gelu_ending_at(graph, params, n)) {
      last_of[n.id] = gelu->x;
      dropped.insert(gelu->inner.begin(), gelu->inner.end());
    }
  GraphRewriter r(graph, params);
  for (const graph::Node& n : graph.nodes()) {
    if (dropped.count(n.id)) continue;
    const auto gelu = last_of.find(n.id);
    if (gelu == last_of.end()) {
      r.copy(n);
      continue;
    }
    r.redirect(n.outputs.at(0), r.add(OpKind::GELU, n.name, {}, {r.map(gelu->second)}));
  }
  return r.finish(static_cast<int>(last_of.size()));
}

}  // namespace telar::optimize
