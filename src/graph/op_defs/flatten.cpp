// Flatten: x[B,...] -> [B, prod(...)], same dtype.
#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  c.arity(1, 1);
  const auto& x = c.in(0).shape;
  if (x.size() < 2) c.bad("input must have a batch dimension and at least one more");
  std::int64_t n = 1;
  for (std::size_t i = 1; i < x.size(); ++i) n *= x[i];
  return {{x[0], n}, c.in(0).dtype};
}

// Of a [B,F] input nothing changes; otherwise each channel becomes a run of features.
ChannelFlow channels(const Graph& g, const Node& n) {
  return g.value(n.inputs.at(0)).shape.size() == 2 ? ChannelFlow::PerChannel
                                                   : ChannelFlow::Flatten;
}

}  // namespace

const OpDef kFlatten{.name = "Flatten",
                     .kernels = KernelFamily::Flatten,
                     .infer = infer,
                     .cost = relabelling_cost,
                     .channels = channels};

}  // namespace telar::graph::op_defs
