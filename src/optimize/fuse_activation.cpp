#include <map>
#include <set>

#include "optimize/passes.hpp"

namespace telar::optimize {

namespace {

using graph::NodeId;
using graph::OpKind;
using graph::ValueId;

graph::PostOps* post_ops_of(graph::Attrs& attrs) {
  if (auto* c = std::get_if<graph::Conv2dAttrs>(&attrs)) return &c->post;
  if (auto* l = std::get_if<graph::LinearAttrs>(&attrs)) return &l->post;
  return nullptr;
}

// The activation each Conv2d or Linear takes over, by the producer's id.
std::map<NodeId, NodeId> fusible(const graph::Graph& g) {
  std::map<NodeId, NodeId> out;
  for (const graph::Node& act : g.nodes()) {
    if (!graph::fusible_activation(act.kind)) continue;
    const graph::Value& x = g.value(act.inputs.at(0));
    if (x.producer < 0 || !read_only_by_one(g, x.id)) continue;
    graph::Attrs attrs = g.node(x.producer).attrs;
    const graph::PostOps* post = post_ops_of(attrs);
    if (post && post->activation == OpKind::Count) out[x.producer] = act.id;
  }
  return out;
}

}  // namespace

Rewritten fuse_activation(const graph::Graph& graph, const graph::ParameterSet& params) {
  const std::map<NodeId, NodeId> fusions = fusible(graph);
  std::set<NodeId> fused;
  for (const auto& [producer, act] : fusions) fused.insert(act);
  GraphRewriter r(graph, params);
  for (const graph::Node& n : graph.nodes()) {
    if (fused.count(n.id)) continue;  // its producer, earlier, computes its output
    const auto fusion = fusions.find(n.id);
    if (fusion == fusions.end()) {
      r.copy(n);
      continue;
    }
    const graph::Node& act = graph.node(fusion->second);
    graph::Attrs attrs = n.attrs;
    graph::PostOps& post = *post_ops_of(attrs);
    post.activation = act.kind;
    if (const auto* e = std::get_if<graph::EltwiseAttrs>(&act.attrs)) post.eltwise = *e;
    std::vector<ValueId> inputs;
    for (ValueId in : n.inputs) inputs.push_back(r.map(in));
    const ValueId out = r.add(n.kind, n.name, std::move(attrs), std::move(inputs));
    r.redirect(n.outputs.at(0), out);
    r.redirect(act.outputs.at(0), out);
  }
  return r.finish(static_cast<int>(fusions.size()));
}

}  // namespace telar::optimize
