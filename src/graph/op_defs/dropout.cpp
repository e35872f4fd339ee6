// Dropout: x (any shape, f32) -> x's shape; zeroes each element with probability p in training.
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  c.arity(1, 1);
  c.dtype(0, DType::F32);
  const float p = c.attr<DropoutAttrs>().p;
  if (!(p >= 0.0f && p < 1.0f)) c.bad(fmt::format("p={} must be in [0, 1)", p));
  return {c.in(0).shape, DType::F32};
}

std::string describe(const Node& n) {
  return fmt::format("p={}", n.attr<DropoutAttrs>().p);
}

}  // namespace

const OpDef kDropout{.name = "Dropout",
                     .kernels = KernelFamily::Dropout,
                     .infer = infer,
                     .describe = describe,
                     .channels = per_channel};

}  // namespace telar::graph::op_defs
