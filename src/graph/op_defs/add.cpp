// Add: a, b (same shape) -> a's shape.
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  c.arity(2, 2);
  if (c.in(0).shape != c.in(1).shape)
    c.bad(fmt::format("operands have shapes {} and {}; they must be equal",
                      shape_str(c.in(0).shape), shape_str(c.in(1).shape)));
  return {c.in(0).shape, DType::F32};
}

}  // namespace

const OpDef kAdd{"Add", KernelFamily::Add, infer};

}  // namespace telar::graph::op_defs
