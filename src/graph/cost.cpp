#include "graph/cost.hpp"

#include "graph/op_def.hpp"

namespace telar::graph {

namespace {
std::int64_t value_bytes(const Graph& g, ValueId id, std::int64_t batch) {
  return numel_at(g, id, batch) * static_cast<std::int64_t>(dtype_size(g.value(id).dtype));
}
}  // namespace

std::int64_t numel_at(const Graph& g, ValueId id, std::int64_t batch) {
  std::int64_t n = 1;
  for (auto d : g.value(id).shape) n *= d == kBatchDim ? batch : (d == kDynamicDim ? 0 : d);
  return n;
}

NodeCost node_cost(const Graph& g, const Node& n, const CostOptions& o) {
  NodeCost c;
  for (ValueId in : n.inputs) {
    const auto kind = g.value(in).kind;
    if (kind == ValueKind::Parameter || kind == ValueKind::Buffer)
      c.param_bytes += value_bytes(g, in, o.batch);
    else
      c.input_bytes += value_bytes(g, in, o.batch);
  }
  for (ValueId out : n.outputs) c.output_bytes += value_bytes(g, out, o.batch);
  const auto& def = op_def(n.kind);
  if (def.cost)
    def.cost(g, n, o, c);
  else
    c.macs = numel_at(g, n.outputs.at(0), o.batch);  // one arithmetic op per output element
  return c;
}

NodeCost graph_cost(const Graph& g, const CostOptions& o) {
  NodeCost total;
  for (const auto& n : g.nodes()) {
    NodeCost c = node_cost(g, n, o);
    total.macs += c.macs;
    total.input_bytes += c.input_bytes;
    total.param_bytes += c.param_bytes;
    total.output_bytes += c.output_bytes;
  }
  return total;
}

Lowering node_lowering(const Node& n) { return op_def(n.kind).lowering; }

}  // namespace telar::graph
