#include <cmath>
#include <map>

#include "optimize/passes.hpp"

namespace telar::optimize {

namespace {

using graph::NodeId;
using graph::OpKind;

// Whether a MaxPool2d without padding of its own can take this Pad: -inf at the bottom and
// right only (ONNX's ceil_mode), less than a window's worth.
bool max_pool_takes(const graph::PadAttrs& p, const graph::Pool2dAttrs& a) {
  return p.top == 0 && p.left == 0 && std::isinf(p.value) && p.value < 0 && p.bottom < a.kernel_h &&
         p.right < a.kernel_w;  // else a window of padding only
}

// Whether an AvgPool2d without padding of its own can take this Pad: zeros, the same on both
// sides of each axis, at most half a window (PyTorch's bound on an AvgPool2d's padding), which
// the pooling then pads itself and counts in its divisor (count_include_pad: every window of
// the padded input holds kernel_h x kernel_w elements, as it did).
bool avg_pool_takes(const graph::PadAttrs& p, const graph::Pool2dAttrs& a) {
  return p.value == 0.0f && p.top == p.bottom && p.left == p.right && 2 * p.top <= a.kernel_h &&
         2 * p.left <= a.kernel_w;
}

// Each Pad taken over, by its id, with the pooling it feeds.
std::map<NodeId, NodeId> foldable(const graph::Graph& g) {
  std::map<NodeId, NodeId> out;
  for (const graph::Node& pool : g.nodes()) {
    if (pool.kind != OpKind::MaxPool2d && pool.kind != OpKind::AvgPool2d) continue;
    const auto& a = pool.attr<graph::Pool2dAttrs>();
    if (a.pad_h != 0 || a.pad_w != 0 || a.end_pad.any()) continue;
    const graph::Value& padded = g.value(pool.inputs.at(0));
    if (padded.producer < 0 || !read_only_by_one(g, padded.id)) continue;
    const graph::Node& pad = g.node(padded.producer);
    if (pad.kind != OpKind::Pad) continue;
    const auto& p = pad.attr<graph::PadAttrs>();
    if (pool.kind == OpKind::MaxPool2d ? max_pool_takes(p, a) : avg_pool_takes(p, a))
      out[pad.id] = pool.id;
  }
  return out;
}

}  // namespace

Rewritten fold_pad_into_pool(const graph::Graph& graph, const graph::ParameterSet& params) {
  return fuse_pairs(graph, params, foldable(graph),
                    [](GraphRewriter& r, const graph::Node& pad, const graph::Node& pool) {
                      graph::Pool2dAttrs a = pool.attr<graph::Pool2dAttrs>();
                      const auto& p = pad.attr<graph::PadAttrs>();
                      if (pool.kind == OpKind::MaxPool2d) {
                        a.end_pad.h = p.bottom;
                        a.end_pad.w = p.right;
                      } else {
                        a.pad_h = p.top;
                        a.pad_w = p.left;
                        a.count_include_pad = true;
                      }
                      return r.add(pool.kind, pool.name, a, {r.map(pad.inputs.at(0))});
                    });
}

}  // namespace telar::optimize
