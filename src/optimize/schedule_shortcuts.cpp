#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "optimize/passes.hpp"

namespace telar::optimize {

namespace {

using graph::NodeId;
using graph::OpKind;
using graph::ValueId;

// The Conv2d producing `v` for the Add alone, or nullptr.
const graph::Node* conv_read_only_by_add(const graph::Graph& g, ValueId v) {
  const graph::Value& value = g.value(v);
  if (value.producer < 0 || !read_only_by_one(g, v)) return nullptr;
  const graph::Node& p = g.node(value.producer);
  return p.kind == OpKind::Conv2d ? &p : nullptr;
}

// The last node producing an input of `node` (-1: it reads only inputs and weights).
NodeId last_input_producer(const graph::Graph& g, const graph::Node& node) {
  NodeId last = -1;
  for (ValueId in : node.inputs) last = std::max(last, g.value(in).producer);
  return last;
}

}  // namespace

Rewritten schedule_shortcuts_first(const graph::Graph& graph, const graph::ParameterSet& params) {
  std::map<NodeId, std::vector<NodeId>> before;  // node -> shortcuts moved to just before it
  std::set<NodeId> moved;
  for (const graph::Node& add : graph.nodes()) {
    if (add.kind != OpKind::Add || add.inputs.size() != 2 || add.inputs[0] == add.inputs[1])
      continue;
    const graph::Node* a = conv_read_only_by_add(graph, add.inputs[0]);
    const graph::Node* b = conv_read_only_by_add(graph, add.inputs[1]);
    if (!a || !b) continue;
    if (a->id > b->id) std::swap(a, b);
    // b is the shortcut when its inputs all exist before a's last one is made (two
    // convolutions of the same value are left in their order).
    if (last_input_producer(graph, *b) >= last_input_producer(graph, *a)) continue;
    before[a->id].push_back(b->id);
    moved.insert(b->id);
  }
  GraphRewriter r(graph, params);
  for (const graph::Node& n : graph.nodes()) {
    if (moved.count(n.id)) continue;
    const auto it = before.find(n.id);
    if (it != before.end())
      for (NodeId shortcut : it->second) r.copy(graph.node(shortcut));
    r.copy(n);
  }
  return r.finish(static_cast<int>(moved.size()));
}

}  // namespace telar::optimize
