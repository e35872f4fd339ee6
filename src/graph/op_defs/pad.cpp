// Pad: x[B,C,H,W] -> [B,C,top+H+bottom,left+W+right], the border filled with a constant.
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  c.arity(1, 1);
  c.rank(0, 4, "N x C x H x W");
  c.dtype(0, DType::F32);
  const auto& a = c.attr<PadAttrs>();
  if (a.top < 0 || a.left < 0 || a.bottom < 0 || a.right < 0)
    c.bad(fmt::format("pads {} {} {} {} must not be negative", a.top, a.left, a.bottom, a.right));
  const auto& x = c.in(0).shape;
  return {{x[0], x[1], a.top + x[2] + a.bottom, a.left + x[3] + a.right}, DType::F32};
}

std::string describe(const Node& n) {
  const auto& a = n.attr<PadAttrs>();
  return fmt::format("t{} l{} b{} r{} value {}", a.top, a.left, a.bottom, a.right, a.value);
}

}  // namespace

// Pads the spatial axes only.
const OpDef kPad{.name = "Pad",
                 .kernels = KernelFamily::Pad,
                 .infer = infer,
                 .describe = describe,
                 .channels = per_channel};

}  // namespace telar::graph::op_defs
