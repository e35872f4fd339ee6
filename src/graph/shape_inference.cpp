#include "graph/shape_inference.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "graph/op_def.hpp"

namespace telar::graph {

std::int64_t window_output_size(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                                std::int64_t pad, std::int64_t dilation) {
  const std::int64_t effective = dilation * (kernel - 1) + 1;
  if (in + 2 * pad < effective) return 0;
  return (in + 2 * pad - effective) / stride + 1;
}

void ShapeCheck::bad(const std::string& what) const {
  fail("{} '{}': {}", op_name(kind_), node_, what);
}

void ShapeCheck::arity(std::size_t lo, std::size_t hi) const {
  if (inputs_.size() < lo || inputs_.size() > hi)
    bad(fmt::format("expects {} to {} inputs, got {}", lo, hi, inputs_.size()));
}

void ShapeCheck::rank(std::size_t i, int r, const char* layout) const {
  if (static_cast<int>(in(i).shape.size()) != r)
    bad(fmt::format("input '{}' has shape {}, expected rank {} ({})", in(i).name,
                    shape_str(in(i).shape), r, layout));
}

void ShapeCheck::dtype(std::size_t i, DType t) const {
  if (in(i).dtype != t)
    bad(fmt::format("input '{}' has dtype {}, expected {}", in(i).name, dtype_name(in(i).dtype),
                    dtype_name(t)));
}

void ShapeCheck::shape_is(std::size_t i, const Shape& s) const {
  if (in(i).shape != s)
    bad(fmt::format("'{}' has shape {}, expected {}", in(i).name, shape_str(in(i).shape),
                    shape_str(s)));
}

InferredValue infer_output(const Graph& graph, OpKind kind, const std::string& node_name,
                           const Attrs& attrs, const std::vector<ValueId>& inputs) {
  const ShapeCheck check{graph, kind, node_name, attrs, inputs};
  for (ValueId v : inputs)
    if (v < 0 || static_cast<std::size_t>(v) >= graph.values().size())
      check.bad(fmt::format("refers to an unknown value id {}", v));
  return op_def(kind).infer(check);
}

}  // namespace telar::graph
