// MatMul: a[B, ..., M, K] x b[B, ..., K, N] -> [B, ..., M, N], one matrix product per leading
// index (both operands computed, e.g. attention's queries by its transposed keys).
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  c.arity(2, 2);
  c.dtype(0, DType::F32);
  c.dtype(1, DType::F32);
  const auto& a = c.in(0).shape;
  const auto& b = c.in(1).shape;
  if (a.size() < 3 || a.size() != b.size())
    c.bad(
        fmt::format("operands {} and {} must have one rank of at least 3 (the batch, then "
                    "matrices)",
                    shape_str(a), shape_str(b)));
  const std::size_t r = a.size();
  if (!std::equal(a.begin(), a.end() - 2, b.begin()) || a[r - 1] != b[r - 2])
    c.bad(
        fmt::format("{} x {}: the leading dimensions must be equal and the first operand's "
                    "columns the second's rows",
                    shape_str(a), shape_str(b)));
  Shape out = a;
  out[r - 1] = b[r - 1];
  return {out, DType::F32};
}

// One multiply-add per output element and position along K.
void cost(const Graph& g, const Node& n, const CostOptions& o, NodeCost& c) {
  const Shape& a = g.value(n.inputs.at(0)).shape;
  c.macs = numel_at(g, n.outputs.at(0), o.batch) * a.back();
}

}  // namespace

const OpDef kMatMul{
    .name = "MatMul", .kernels = KernelFamily::MatMul, .infer = infer, .cost = cost};

}  // namespace telar::graph::op_defs
