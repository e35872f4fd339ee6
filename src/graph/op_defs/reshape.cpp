// Reshape: x[B, ...] -> [B, dims...] with as many elements per sample; the data is not moved.
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  c.arity(1, 1);
  const auto& a = c.attr<ReshapeAttrs>();
  const auto& x = c.in(0).shape;
  if (x.size() < 2) c.bad("input must have a batch dimension and at least one more");
  if (a.dims.empty()) c.bad("the new shape needs at least one dimension after the batch");
  Shape out{x[0]};
  for (auto d : a.dims) {
    if (d <= 0) c.bad(fmt::format("dimension {} of the new shape is not positive", d));
    out.push_back(d);
  }
  const Shape per_sample_in(x.begin() + 1, x.end()), per_sample_out(out.begin() + 1, out.end());
  if (shape_numel(per_sample_in) != shape_numel(per_sample_out))
    c.bad(fmt::format("{} has {} elements per sample; {} has {}", shape_str(x),
                      shape_numel(per_sample_in), shape_str(out), shape_numel(per_sample_out)));
  return {out, c.in(0).dtype};
}

std::string describe(const Node& n) {
  return fmt::format("to B x {}", fmt::join(n.attr<ReshapeAttrs>().dims, " x "));
}

}  // namespace

void relabelling_cost(const Graph&, const Node&, const CostOptions&, NodeCost& cost) {
  cost = NodeCost{};
}

const OpDef kReshape{"Reshape", KernelFamily::Flatten, infer, relabelling_cost, describe};

}  // namespace telar::graph::op_defs
