#include <cmath>
#include <map>

#include "optimize/passes.hpp"

namespace telar::optimize {

namespace {

using graph::NodeId;
using graph::OpKind;

// Each Pad taken over, by its id, with the MaxPool2d it feeds.
std::map<NodeId, NodeId> foldable(const graph::Graph& g) {
  std::map<NodeId, NodeId> out;
  for (const graph::Node& pool : g.nodes()) {
    if (pool.kind != OpKind::MaxPool2d) continue;
    const auto& a = pool.attr<graph::Pool2dAttrs>();
    if (a.pad_h != 0 || a.pad_w != 0 || a.end_pad.any()) continue;
    const graph::Value& padded = g.value(pool.inputs.at(0));
    if (padded.producer < 0 || !read_only_by_one(g, padded.id)) continue;
    const graph::Node& pad = g.node(padded.producer);
    if (pad.kind != OpKind::Pad) continue;
    const auto& p = pad.attr<graph::PadAttrs>();
    if (p.top != 0 || p.left != 0 || !(std::isinf(p.value) && p.value < 0)) continue;
    if (p.bottom >= a.kernel_h || p.right >= a.kernel_w) continue;  // a window of padding only
    out[pad.id] = pool.id;
  }
  return out;
}

}  // namespace

Rewritten fold_pad_into_maxpool(const graph::Graph& graph, const graph::ParameterSet& params) {
  return fuse_pairs(graph, params, foldable(graph),
                    [](GraphRewriter& r, const graph::Node& pad, const graph::Node& pool) {
                      graph::Pool2dAttrs a = pool.attr<graph::Pool2dAttrs>();
                      const auto& p = pad.attr<graph::PadAttrs>();
                      a.end_pad.h = p.bottom;
                      a.end_pad.w = p.right;
                      return r.add(OpKind::MaxPool2d, pool.name, a, {r.map(pad.inputs.at(0))});
                    });
}

}  // namespace telar::optimize
