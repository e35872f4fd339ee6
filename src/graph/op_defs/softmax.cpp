// Softmax: x[B, ..., N] -> the same shape, over the last axis (each row on its own).
#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  c.arity(1, 1);
  if (c.in(0).shape.size() < 2) c.bad("the input needs an axis after the batch");
  return {c.in(0).shape, DType::F32};
}

}  // namespace

const OpDef kSoftmax{"Softmax", KernelFamily::Softmax, infer};

}  // namespace telar::graph::op_defs
