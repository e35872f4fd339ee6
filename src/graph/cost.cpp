#include "graph/cost.hpp"

#include <cmath>

namespace telar::graph {

namespace {
std::int64_t value_bytes(const Graph& g, ValueId id, std::int64_t batch) {
  const Value& v = g.value(id);
  std::int64_t n = 1;
  for (auto d : v.shape) n *= d == kBatchDim ? batch : (d == kDynamicDim ? 0 : d);
  return n * static_cast<std::int64_t>(dtype_size(v.dtype));
}
std::int64_t numel_at(const Graph& g, ValueId id, std::int64_t batch) {
  return value_bytes(g, id, batch) / static_cast<std::int64_t>(dtype_size(g.value(id).dtype));
}
}  // namespace

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
  const std::int64_t out_elems = numel_at(g, n.outputs.at(0), o.batch);
  switch (n.kind) {
    case OpKind::Linear: {
      const auto& a = n.attr<LinearAttrs>();
      c.macs = o.batch * a.in_features * a.out_features;
      break;
    }
    case OpKind::Conv2d: {
      const auto& a = n.attr<Conv2dAttrs>();
      c.macs = out_elems * (a.in_channels / a.groups) * a.kernel_h * a.kernel_w;
      break;
    }
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d: {
      const auto& a = n.attr<Pool2dAttrs>();
      c.macs = out_elems * a.kernel_h * a.kernel_w;
      break;
    }
    case OpKind::EmbeddingBag: {
      const auto& a = n.attr<EmbeddingBagAttrs>();
      const auto rows = static_cast<std::int64_t>(std::llround(o.indices_per_bag * o.batch));
      c.macs = rows * a.dim;
      // Only the rows looked up are read, not the whole table.
      c.param_bytes = rows * a.dim * 4;
      c.input_bytes = rows * 8 + o.batch * 8;
      break;
    }
    case OpKind::DotInteraction: {
      const auto& a = n.attr<DotInteractionAttrs>();
      c.macs = o.batch * interaction_pairs(a.num_sparse, a.self_interaction) * a.dim;
      break;
    }
    case OpKind::GlobalAvgPool:
      c.macs = numel_at(g, n.inputs.at(0), o.batch);
      break;
    case OpKind::CrossEntropy:
    case OpKind::BCEWithLogits:
    case OpKind::MSE:
      c.macs = numel_at(g, n.inputs.at(0), o.batch);
      break;
    default:
      c.macs = out_elems;  // one arithmetic op per output element
      break;
  }
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

Lowering node_lowering(const Node& n) {
  switch (n.kind) {
    case OpKind::Linear: return Lowering::Gemm;
    case OpKind::Conv2d: return Lowering::Conv;
    case OpKind::EmbeddingBag: return Lowering::SparseDense;
    default: return Lowering::Host;
  }
}

}  // namespace telar::graph
