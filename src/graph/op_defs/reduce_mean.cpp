// ReduceMean: the mean over one axis after the batch, kept as a dimension of size 1
// (x[B, ..., n, ...] -> [B, ..., 1, ...]), e.g. a layer norm's statistics over the channels.
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  c.arity(1, 1);
  c.dtype(0, DType::F32);
  const auto axis = c.attr<ReduceAttrs>().axis;
  Shape out = c.in(0).shape;
  if (axis < 1 || axis >= static_cast<std::int64_t>(out.size()))
    c.bad(fmt::format("axis {} is not an axis after the batch of {}", axis, shape_str(out)));
  out[static_cast<std::size_t>(axis)] = 1;
  return {out, DType::F32};
}

// One addition per input element.
void cost(const Graph& g, const Node& n, const CostOptions& o, NodeCost& c) {
  c.macs = numel_at(g, n.inputs.at(0), o.batch);
}

std::string describe(const Node& n) { return fmt::format("axis {}", n.attr<ReduceAttrs>().axis); }

ChannelFlow channels(const Graph&, const Node& n) {
  return n.attr<ReduceAttrs>().axis == 1 ? ChannelFlow::Opaque : ChannelFlow::PerChannel;
}

}  // namespace

const OpDef kReduceMean{.name = "ReduceMean",
                        .kernels = KernelFamily::ReduceMean,
                        .infer = infer,
                        .cost = cost,
                        .describe = describe,
                        .channels = channels};

}  // namespace telar::graph::op_defs
