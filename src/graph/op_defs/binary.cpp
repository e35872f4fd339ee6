// Add, Sub, Mul, Div: a, b -> their broadcast shape (NumPy's rules; a residual add has two
// operands of one shape, a squeeze-and-excitation scale multiplies [B,C,H,W] by [B,C,1,1]).
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  c.arity(2, 2);
  c.dtype(0, DType::F32);
  c.dtype(1, DType::F32);
  const auto shape = broadcast_shape(c.in(0).shape, c.in(1).shape);
  if (!shape)
    c.bad(fmt::format("operands have shapes {} and {}, which do not broadcast (each dimension "
                      "must be equal, or 1 in one of them)",
                      shape_str(c.in(0).shape), shape_str(c.in(1).shape)));
  if (shape->empty() || (*shape)[0] != kBatchDim)
    c.bad(fmt::format("the result {} has no batch dimension first; one operand must be computed "
                      "from the model's input",
                      shape_str(*shape)));
  return {*shape, DType::F32};
}

ChannelFlow channels(const Graph&, const Node&) { return ChannelFlow::Elementwise; }

}  // namespace

const OpDef kAdd{.name = "Add", .kernels = KernelFamily::Binary, .infer = infer, .channels = channels};
const OpDef kSub{.name = "Sub", .kernels = KernelFamily::Binary, .infer = infer, .channels = channels};
const OpDef kMul{.name = "Mul", .kernels = KernelFamily::Binary, .infer = infer, .channels = channels};
const OpDef kDiv{.name = "Div", .kernels = KernelFamily::Binary, .infer = infer, .channels = channels};

}  // namespace telar::graph::op_defs
