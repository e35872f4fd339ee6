#include <map>

#include "graph/op_def.hpp"
#include "optimize/passes.hpp"

namespace telar::optimize {

namespace {

using graph::NodeId;
using graph::OpKind;
using graph::ValueId;

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

// The Add each Conv2d takes over, by the Conv2d's id.
std::map<NodeId, NodeId> fusible(const graph::Graph& g) {
  std::map<NodeId, NodeId> out;
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
      out[producer(conv_out)] = add.id;
      break;
    }
  }
  return out;
}

}  // namespace

Rewritten fuse_residual_add(const graph::Graph& graph, const graph::ParameterSet& params) {
  return fuse_pairs(graph, params, fusible(graph),
                    [](GraphRewriter& r, const graph::Node& conv, const graph::Node& add) {
                      graph::Conv2dAttrs a = conv.attr<graph::Conv2dAttrs>();
                      a.post.sum = true;
                      // The summand is the Add's operand that is not the convolution's output.
                      const ValueId summand =
                          add.inputs[0] == conv.outputs.at(0) ? add.inputs[1] : add.inputs[0];
                      std::vector<ValueId> inputs = r.map_inputs(conv);
                      inputs.push_back(r.map(summand));
                      return r.add(OpKind::Conv2d, conv.name, a, std::move(inputs));
                    });
}

}  // namespace telar::optimize
