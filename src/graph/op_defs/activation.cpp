// Element-wise activations: x (any shape, f32) -> x's shape.
#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  c.arity(1, 1);
  c.dtype(0, DType::F32);
  return {c.in(0).shape, DType::F32};
}

}  // namespace

const OpDef kReLU{"ReLU", KernelFamily::Activation, infer};
const OpDef kReLU6{"ReLU6", KernelFamily::Activation, infer};
const OpDef kSigmoid{"Sigmoid", KernelFamily::Activation, infer};
const OpDef kTanh{"Tanh", KernelFamily::Activation, infer};

}  // namespace telar::graph::op_defs
