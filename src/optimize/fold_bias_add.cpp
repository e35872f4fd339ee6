#include <map>

#include "optimize/passes.hpp"

namespace telar::optimize {

namespace {

using graph::NodeId;
using graph::OpKind;
using graph::ValueId;

// Each Linear without a bias, by its id, with the Add of a bias vector (one weight per output
// feature, read by nothing else: the Linear's bias from now on) that it feeds alone.
std::map<NodeId, NodeId> foldable(const graph::Graph& g, const graph::ParameterSet& params) {
  std::map<NodeId, NodeId> out;
  for (const graph::Node& add : g.nodes()) {
    if (add.kind != OpKind::Add) continue;
    for (std::size_t i = 0; i < 2; ++i) {
      const graph::Value& product = g.value(add.inputs[i]);
      if (product.producer < 0 || !read_only_by_one(g, product.id)) continue;
      const graph::Node& linear = g.node(product.producer);
      if (linear.kind != OpKind::Linear) continue;
      const auto& a = linear.attr<graph::LinearAttrs>();
      if (a.bias || a.post.any() || !weight_vector(g, params, add.inputs[1 - i], a.out_features) ||
          g.consumers(add.inputs[1 - i]).size() != 1)
        continue;
      out[linear.id] = add.id;
      break;
    }
  }
  return out;
}

}  // namespace

Rewritten fold_bias_add(const graph::Graph& graph, const graph::ParameterSet& params) {
  return fuse_pairs(
      graph, params, foldable(graph, params),
      [](GraphRewriter& r, const graph::Node& linear, const graph::Node& add) {
        graph::LinearAttrs a = linear.attr<graph::LinearAttrs>();
        a.bias = true;
        const ValueId bias = add.inputs[0] == linear.outputs.at(0) ? add.inputs[1] : add.inputs[0];
        return r.add(OpKind::Linear, linear.name, a,
                     {r.map(linear.inputs.at(0)), r.map(linear.inputs.at(1)), r.map(bias)});
      });
}

}  // namespace telar::optimize
