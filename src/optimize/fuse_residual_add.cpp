#include <map>
#include <set>

#include "graph/op_def.hpp"
#include "optimize/passes.hpp"

namespace telar::optimize {

namespace {

using graph::NodeId;
using graph::OpKind;
using graph::ValueId;

struct Sum {
  NodeId add;
  ValueId summand;
};

// Whether `v` is an operand of `add` that a Conv2d without post-ops produces for it alone.
bool from_plain_conv(const graph::Graph& g, ValueId v) {
  const graph::Value& value = g.value(v);
  if (value.producer < 0 || !read_only_by_one(g, v)) return false;
  const graph::Node& p = g.node(value.producer);
  return p.kind == OpKind::Conv2d && !p.attr<graph::Conv2dAttrs>().post.any();
}

bool relabelling(const graph::Node& n) {
  return graph::kernel_family(n.kind) == graph::KernelFamily::Flatten;
}

// Whether the convolution `conv` may write its output over `summand`: nothing reads the
// summand from the convolution on (its other readers all run before it) and no view shares its
// storage (a relabelling's output is its input's storage, as a view).
bool overwritable(const graph::Graph& g, ValueId summand, NodeId add, NodeId conv) {
  const graph::Value& s = g.value(summand);
  if (s.kind != graph::ValueKind::Activation || s.producer < 0 || s.producer >= conv ||
      relabelling(g.node(s.producer)) || is_graph_output(g, summand))
    return false;
  for (NodeId reader : g.consumers(summand))
    if (reader != add && (reader >= conv || relabelling(g.node(reader)))) return false;
  return true;
}

// The sum each Conv2d takes over, by the Conv2d's id.
std::map<NodeId, Sum> fusible(const graph::Graph& g) {
  std::map<NodeId, Sum> out;
  for (const graph::Node& add : g.nodes()) {
    if (add.kind != OpKind::Add || add.inputs.size() != 2) continue;
    const graph::Value& y = g.value(add.outputs.at(0));
    const ValueId a = add.inputs[0], b = add.inputs[1];
    if (a == b || g.value(a).shape != y.shape || g.value(b).shape != y.shape) continue;
    // The conv that takes the sum runs after the summand's producer: try the later one first.
    const auto producer = [&](ValueId v) { return g.value(v).producer; };
    const bool a_later = producer(a) > producer(b);
    for (const auto& [conv_out, summand] : {a_later ? std::pair{a, b} : std::pair{b, a},
                                            a_later ? std::pair{b, a} : std::pair{a, b}}) {
      if (!from_plain_conv(g, conv_out) || !overwritable(g, summand, add.id, producer(conv_out)) ||
          out.count(producer(conv_out)))
        continue;
      out[producer(conv_out)] = {add.id, summand};
      break;
    }
  }
  return out;
}

}  // namespace

Rewritten fuse_residual_add(const graph::Graph& graph, const graph::ParameterSet& params) {
  const std::map<NodeId, Sum> sums = fusible(graph);
  std::set<NodeId> fused_adds;
  for (const auto& [conv, sum] : sums) fused_adds.insert(sum.add);
  GraphRewriter r(graph, params);
  for (const graph::Node& n : graph.nodes()) {
    if (fused_adds.count(n.id)) continue;  // its Conv2d, earlier, computes its output
    const auto sum = sums.find(n.id);
    if (sum == sums.end()) {
      r.copy(n);
      continue;
    }
    graph::Conv2dAttrs a = n.attr<graph::Conv2dAttrs>();
    a.post.sum = true;
    std::vector<ValueId> inputs;
    for (ValueId in : n.inputs) inputs.push_back(r.map(in));
    inputs.push_back(r.map(sum->second.summand));
    const ValueId out = r.add(OpKind::Conv2d, n.name, a, std::move(inputs));
    r.redirect(n.outputs.at(0), out);
    r.redirect(graph.node(sum->second.add).outputs.at(0), out);
  }
  return r.finish(static_cast<int>(sums.size()));
}

}  // namespace telar::optimize
