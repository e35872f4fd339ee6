// Element-wise activations: x (any shape, f32) -> x's shape.
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  c.arity(1, 1);
  c.dtype(0, DType::F32);
  return {c.in(0).shape, DType::F32};
}

std::string describe_alpha(const Node& n) {
  return fmt::format("alpha {}", n.attr<EltwiseAttrs>().alpha);
}

std::string describe_alpha_beta(const Node& n) {
  const auto& a = n.attr<EltwiseAttrs>();
  return fmt::format("alpha {} beta {}", a.alpha, a.beta);
}

}  // namespace

const OpDef kReLU{"ReLU", KernelFamily::Activation, infer};
const OpDef kReLU6{"ReLU6", KernelFamily::Activation, infer};
const OpDef kSigmoid{"Sigmoid", KernelFamily::Activation, infer};
const OpDef kTanh{"Tanh", KernelFamily::Activation, infer};
const OpDef kLeakyReLU{"LeakyReLU", KernelFamily::Activation, infer, nullptr, describe_alpha};
const OpDef kHardSigmoid{"HardSigmoid", KernelFamily::Activation, infer, nullptr,
                         describe_alpha_beta};
const OpDef kHardSwish{"HardSwish", KernelFamily::Activation, infer};
const OpDef kSqrt{"Sqrt", KernelFamily::Activation, infer};
const OpDef kErf{"Erf", KernelFamily::Activation, infer};

}  // namespace telar::graph::op_defs
