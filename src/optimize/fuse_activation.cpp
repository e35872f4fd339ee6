#include <map>

#include "optimize/passes.hpp"

namespace telar::optimize {

namespace {

using graph::NodeId;
using graph::OpKind;

// The post-ops of a node that can take `activation` over: a Conv2d's or Linear's (any fusible
// activation), a BatchNorm2d's (a ReLU: oneDNN's fuse_norm_relu); null for any other.
graph::PostOps* post_ops_of(graph::Attrs& attrs, OpKind activation) {
  if (auto* c = std::get_if<graph::Conv2dAttrs>(&attrs)) return &c->post;
  if (auto* l = std::get_if<graph::LinearAttrs>(&attrs)) return &l->post;
  auto* b = std::get_if<graph::BatchNormAttrs>(&attrs);
  if (b && activation == OpKind::ReLU) return &b->post;
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
    const graph::PostOps* post = post_ops_of(attrs, act.kind);
    if (post && post->activation == OpKind::Count) out[x.producer] = act.id;
  }
  return out;
}

}  // namespace

Rewritten fuse_activation(const graph::Graph& graph, const graph::ParameterSet& params) {
  return fuse_pairs(graph, params, fusible(graph),
                    [](GraphRewriter& r, const graph::Node& producer, const graph::Node& act) {
                      graph::Attrs attrs = producer.attrs;
                      graph::PostOps& post = *post_ops_of(attrs, act.kind);
                      post.activation = act.kind;
                      if (const auto* e = std::get_if<graph::EltwiseAttrs>(&act.attrs))
                        post.eltwise = *e;
                      return r.add(producer.kind, producer.name, std::move(attrs),
                                   r.map_inputs(producer));
                    });
}

}  // namespace telar::optimize
