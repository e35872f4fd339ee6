#include "backend/schedule.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace telar::backend {

void check_input_count(const graph::Graph& graph, std::size_t given) {
  if (given != graph.inputs().size())
    fail("graph '{}' takes {} inputs, got {}", graph.name(), graph.inputs().size(), given);
}

void check_input(const graph::Value& v, const Tensor& t, DType dtype, const Shape& shape,
                 bool whole) {
  if (t.dtype() != dtype)
    fail("input '{}' has dtype {}, expected {}", v.name, dtype_name(t.dtype()), dtype_name(dtype));
  if (!whole) return;
  if (!shape_is_concrete(shape)) {
    if (t.rank() != static_cast<int>(shape.size()))
      fail("input '{}' has rank {}, expected {}", v.name, t.rank(), shape.size());
  } else if (t.shape() != shape) {
    fail("input '{}' has shape {}, expected {}", v.name, shape_str(t.shape()), shape_str(shape));
  }
}

std::vector<ValueBinding> bind_values(const graph::Graph& graph, std::int64_t batch,
                                      std::span<const graph::ValueId> input_gradients) {
  using graph::ValueKind;
  std::vector<ValueBinding> bound(graph.values().size());
  for (const auto& v : graph.values()) {
    if (v.kind == ValueKind::Activation) continue;
    ValueBinding& b = bound[static_cast<std::size_t>(v.id)];
    b.shape = v.kind == ValueKind::Input ? bind_batch(v.shape, batch) : v.shape;
    if (v.kind == ValueKind::Parameter) b.requires_grad = true;
    if (v.kind == ValueKind::Input &&
        std::find(input_gradients.begin(), input_gradients.end(), v.id) != input_gradients.end()) {
      if (v.dtype != DType::F32 || !shape_is_concrete(b.shape))
        fail("internal: input '{}' cannot have a gradient (it is not a fixed-shape f32 value)",
             v.name);
      b.requires_grad = true;
    }
  }
  for (const auto& node : graph.nodes()) {
    const graph::Value& out = graph.value(node.outputs.at(0));
    ValueBinding& b = bound[static_cast<std::size_t>(out.id)];
    b.shape = bind_batch(out.shape, batch);
    for (graph::ValueId in : node.inputs)
      b.requires_grad |=
          bound[static_cast<std::size_t>(in)].requires_grad && graph.value(in).dtype == DType::F32;
  }
  return bound;
}

}  // namespace telar::backend
