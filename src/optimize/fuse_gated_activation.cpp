#include <cmath>
#include <map>

#include "optimize/passes.hpp"

namespace telar::optimize {

namespace {

using graph::NodeId;
using graph::OpKind;

// The activation x * gate(x) is: SiLU for a sigmoid, HardSwish for PyTorch's hard sigmoid
// clamp(x / 6 + 1/2, 0, 1); OpKind::Count for any other gate.
OpKind gated_activation(const graph::Node& gate) {
  if (gate.kind == OpKind::Sigmoid) return OpKind::SiLU;
  if (gate.kind != OpKind::HardSigmoid) return OpKind::Count;
  const auto& e = gate.attr<graph::EltwiseAttrs>();
  return std::fabs(e.alpha - 1.0f / 6.0f) <= 1e-7f && e.beta == 0.5f ? OpKind::HardSwish
                                                                     : OpKind::Count;
}

// Each gate taken over, by its id, with the Mul it gates.
std::map<NodeId, NodeId> gated(const graph::Graph& g) {
  std::map<NodeId, NodeId> out;
  for (const graph::Node& mul : g.nodes()) {
    if (mul.kind != OpKind::Mul) continue;
    for (std::size_t i = 0; i < 2; ++i) {
      const graph::Value& gate_out = g.value(mul.inputs[i]);
      if (gate_out.producer < 0 || !read_only_by_one(g, gate_out.id)) continue;
      const graph::Node& gate = g.node(gate_out.producer);
      if (gated_activation(gate) != OpKind::Count && gate.inputs.at(0) == mul.inputs[1 - i]) {
        out[gate.id] = mul.id;
        break;
      }
    }
  }
  return out;
}

}  // namespace

Rewritten fuse_gated_activation(const graph::Graph& graph, const graph::ParameterSet& params) {
  return fuse_pairs(graph, params, gated(graph),
                    [](GraphRewriter& r, const graph::Node& gate, const graph::Node& mul) {
                      return r.add(gated_activation(gate), mul.name, {},
                                   {r.map(gate.inputs.at(0))});
                    });
}

}  // namespace telar::optimize
