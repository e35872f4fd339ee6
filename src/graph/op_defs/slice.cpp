// Slice: elements start, start + step, ... below end of one axis after the batch, the other axes
// whole.
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  c.arity(1, 1);
  const auto& a = c.attr<SliceAttrs>();
  const auto& x = c.in(0).shape;
  if (a.axis < 1 || a.axis >= static_cast<std::int64_t>(x.size()))
    c.bad(fmt::format("axis {} is not an axis after the batch of a rank-{} input", a.axis,
                      x.size()));
  const auto size = x[static_cast<std::size_t>(a.axis)];
  if (a.start < 0 || a.start >= a.end || a.end > size)
    c.bad(fmt::format("[{}, {}) is not a non-empty range within the axis's {} elements", a.start,
                      a.end, size));
  if (a.step.every < 1) c.bad(fmt::format("step {} must be positive", a.step.every));
  Shape out = x;
  out[static_cast<std::size_t>(a.axis)] = a.count();
  return {out, c.in(0).dtype};
}

std::string describe(const Node& n) {
  const auto& a = n.attr<SliceAttrs>();
  if (a.step.any()) return fmt::format("axis {} [{}:{}:{}]", a.axis, a.start, a.end, a.step.every);
  return fmt::format("axis {} [{}:{})", a.axis, a.start, a.end);
}

ChannelFlow channels(const Graph&, const Node& n) {
  return n.attr<SliceAttrs>().axis == 1 ? ChannelFlow::Opaque : ChannelFlow::PerChannel;
}

}  // namespace

const OpDef kSlice{.name = "Slice",
                   .kernels = KernelFamily::Slice,
                   .infer = infer,
                   .describe = describe,
                   .channels = channels};

}  // namespace telar::graph::op_defs
