// Expand: w[1, d...] (a parameter) repeated over the batch of x[B, ...]: y[b] = w[0] for every
// sample (a vision transformer's class token, cls.expand(B, -1, -1)). Only x's batch size is
// read, never its values.
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  c.arity(2, 2);
  c.dtype(1, DType::F32);
  const auto& w = c.in(1).shape;
  if (w.size() < 2 || w[0] != 1)
    c.bad(fmt::format("the repeated tensor has shape {}; it must be [1, ...], one sample",
                      shape_str(w)));
  Shape out = w;
  out[0] = c.in(0).shape.at(0);
  return {out, DType::F32};
}

}  // namespace

const OpDef kExpand{.name = "Expand", .kernels = KernelFamily::Expand, .infer = infer};

}  // namespace telar::graph::op_defs
