// Concat: x1..xn (same shape except along the axis) -> their join along the axis.
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  const auto& a = c.attr<ConcatAttrs>();
  if (c.count() == 0) c.bad("needs at least one input");
  Shape out = c.in(0).shape;
  if (a.axis <= 0 || a.axis >= static_cast<int>(out.size()))
    c.bad(fmt::format("axis {} out of range for rank {}", a.axis, out.size()));
  for (std::size_t i = 1; i < c.count(); ++i) {
    const auto& s = c.in(i).shape;
    bool ok = s.size() == out.size();
    for (std::size_t d = 0; ok && d < s.size(); ++d)
      if (static_cast<int>(d) != a.axis && s[d] != out[d]) ok = false;
    if (!ok)
      c.bad(fmt::format("input '{}' has shape {}, incompatible with {} along axis {}", c.in(i).name,
                        shape_str(s), shape_str(c.in(0).shape), a.axis));
    out[a.axis] += s[a.axis];
  }
  return {out, DType::F32};
}

// Along the channels the inputs' channels follow one another; along another axis every input
// has the same channels, which meet one to one.
ChannelFlow channels(const Graph&, const Node& n) {
  return n.attr<ConcatAttrs>().axis == 1 ? ChannelFlow::Concatenate : ChannelFlow::Elementwise;
}

}  // namespace

const OpDef kConcat{
    .name = "Concat", .kernels = KernelFamily::Concat, .infer = infer, .channels = channels};

}  // namespace telar::graph::op_defs
