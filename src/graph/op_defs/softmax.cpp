// Softmax: x[B,N] -> [B,N], over axis 1.
#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  c.arity(1, 1);
  c.rank(0, 2, "batch x classes");
  return {c.in(0).shape, DType::F32};
}

}  // namespace

const OpDef kSoftmax{"Softmax", KernelFamily::Softmax, infer};

}  // namespace telar::graph::op_defs
