// Resize: x[B,C,H,W] -> [B,C,out_h,out_w] (graph/op.hpp's ResizeAttrs: nearest or linear).
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  c.arity(1, 1);
  c.rank(0, 4, "N x C x H x W");
  c.dtype(0, DType::F32);
  const auto& a = c.attr<ResizeAttrs>();
  if (a.out_h <= 0 || a.out_w <= 0)
    c.bad(fmt::format("output size {}x{} must be positive", a.out_h, a.out_w));
  if (a.align_corners && a.mode != ResizeMode::Linear)
    c.bad("align_corners applies to linear resizing only");
  const auto& x = c.in(0).shape;
  return {{x[0], x[1], a.out_h, a.out_w}, DType::F32};
}

// Linear: four input pixels weighed per output element; nearest: a copy.
void cost(const Graph& g, const Node& n, const CostOptions& o, NodeCost& c) {
  const bool linear = n.attr<ResizeAttrs>().mode == ResizeMode::Linear;
  c.macs = linear ? 4 * numel_at(g, n.outputs.at(0), o.batch) : 0;
}

std::string describe(const Node& n) {
  const auto& a = n.attr<ResizeAttrs>();
  return fmt::format("{} to {}x{}{}", mode_name(a.mode), a.out_h, a.out_w,
                     a.align_corners ? " align_corners" : "");
}

}  // namespace

const OpDef kResize{.name = "Resize",
                    .kernels = KernelFamily::Resize,
                    .infer = infer,
                    .cost = cost,
                    .describe = describe,
                    .channels = per_channel};

}  // namespace telar::graph::op_defs
