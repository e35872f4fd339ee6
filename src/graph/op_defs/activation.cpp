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

std::string describe_exponent(const Node& n) {
  return fmt::format("exponent {}", n.attr<EltwiseAttrs>().alpha);
}

}  // namespace

const OpDef kReLU{.name = "ReLU", .kernels = KernelFamily::Activation, .infer = infer, .channels = per_channel};
const OpDef kReLU6{.name = "ReLU6", .kernels = KernelFamily::Activation, .infer = infer, .channels = per_channel};
const OpDef kSigmoid{.name = "Sigmoid", .kernels = KernelFamily::Activation, .infer = infer, .channels = per_channel};
const OpDef kTanh{.name = "Tanh", .kernels = KernelFamily::Activation, .infer = infer, .channels = per_channel};
const OpDef kLeakyReLU{.name = "LeakyReLU",
                       .kernels = KernelFamily::Activation,
                       .infer = infer,
                       .describe = describe_alpha,
                       .channels = per_channel};
const OpDef kHardSigmoid{.name = "HardSigmoid",
                         .kernels = KernelFamily::Activation,
                         .infer = infer,
                         .describe = describe_alpha_beta,
                         .channels = per_channel};
const OpDef kHardSwish{.name = "HardSwish", .kernels = KernelFamily::Activation, .infer = infer, .channels = per_channel};
// x * sigmoid(x) (swish): made by inference compilation from ONNX's Sigmoid and Mul.
const OpDef kSiLU{
    .name = "SiLU", .kernels = KernelFamily::Activation, .infer = infer, .channels = per_channel};
// x * (1 + erf(x / sqrt(2))) / 2 (GELU, the exact form): made by inference compilation from the
// five ops PyTorch exports it as.
const OpDef kGELU{
    .name = "GELU", .kernels = KernelFamily::Activation, .infer = infer, .channels = per_channel};
const OpDef kSqrt{.name = "Sqrt", .kernels = KernelFamily::Activation, .infer = infer, .channels = per_channel};
const OpDef kErf{.name = "Erf", .kernels = KernelFamily::Activation, .infer = infer, .channels = per_channel};
const OpDef kPow{.name = "Pow",
                 .kernels = KernelFamily::Activation,
                 .infer = infer,
                 .describe = describe_exponent,
                 .channels = per_channel};

}  // namespace telar::graph::op_defs
