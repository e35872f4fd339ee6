#include "graph/graph.hpp"

#include "core/error.hpp"
#include "graph/shape_inference.hpp"

namespace telar::graph {

ValueId Graph::new_value(std::string name, Shape shape, DType dtype, ValueKind kind) {
  if (find_value(name))
    fail("graph '{}': a value named '{}' already exists; names must be unique", name_, name);
  // A shape whose element count overflows 64 bits (a damaged file's sizes, multiplied on by
  // later ops) stops here, so that products of a value's dimensions are always defined.
  std::int64_t per_sample = 1;
  for (std::int64_t d : shape)
    if (d > 0 && __builtin_mul_overflow(per_sample, d, &per_sample))
      fail("graph '{}': value '{}' of shape {} holds more elements than 64 bits count", name_, name,
           shape_str(shape));
  Value v;
  v.id = static_cast<ValueId>(values_.size());
  v.name = std::move(name);
  v.shape = std::move(shape);
  v.dtype = dtype;
  v.kind = kind;
  values_.push_back(std::move(v));
  return values_.back().id;
}

ValueId Graph::add_input(std::string name, Shape shape, DType dtype) {
  ValueId id = new_value(std::move(name), std::move(shape), dtype, ValueKind::Input);
  inputs_.push_back(id);
  return id;
}

ValueId Graph::add_parameter(std::string name, Shape shape, Initializer init) {
  require(shape_is_concrete(shape), "parameter '{}' needs a concrete shape, got {}", name,
          shape_str(shape));
  ValueId id = new_value(std::move(name), std::move(shape), DType::F32, ValueKind::Parameter);
  values_[static_cast<std::size_t>(id)].init = init;
  return id;
}

ValueId Graph::add_buffer(std::string name, Shape shape, Initializer init) {
  ValueId id = new_value(std::move(name), std::move(shape), DType::F32, ValueKind::Buffer);
  values_[static_cast<std::size_t>(id)].init = init;
  return id;
}

ValueId Graph::add_node(OpKind kind, std::string name, Attrs attrs, std::vector<ValueId> inputs) {
  if (find_node(name))
    fail("graph '{}': a node named '{}' already exists; names must be unique", name_, name);
  InferredValue out = infer_output(*this, kind, name, attrs, inputs);
  Node n;
  n.id = static_cast<NodeId>(nodes_.size());
  n.name = name;
  n.kind = kind;
  n.attrs = std::move(attrs);
  n.inputs = std::move(inputs);
  ValueId v = new_value(name + ".out", std::move(out.shape), out.dtype, ValueKind::Activation);
  values_[static_cast<std::size_t>(v)].producer = n.id;
  n.outputs.push_back(v);
  nodes_.push_back(std::move(n));
  return v;
}

void Graph::add_output(ValueId value) { outputs_.push_back(value); }

std::vector<ValueId> Graph::parameters() const {
  std::vector<ValueId> out;
  for (const auto& v : values_)
    if (v.kind == ValueKind::Parameter) out.push_back(v.id);
  return out;
}

std::vector<ValueId> Graph::buffers() const {
  std::vector<ValueId> out;
  for (const auto& v : values_)
    if (v.kind == ValueKind::Buffer) out.push_back(v.id);
  return out;
}

std::int64_t Graph::parameter_count() const {
  std::int64_t n = 0;
  for (const auto& v : values_)
    if (v.kind == ValueKind::Parameter) n += shape_numel(v.shape);
  return n;
}

std::vector<NodeId> Graph::consumers(ValueId value) const {
  std::vector<NodeId> out;
  for (const auto& n : nodes_)
    for (ValueId in : n.inputs)
      if (in == value) {
        out.push_back(n.id);
        break;
      }
  return out;
}

const Value* Graph::find_value(std::string_view name) const {
  for (const auto& v : values_)
    if (v.name == name) return &v;
  return nullptr;
}

const Node* Graph::find_node(std::string_view name) const {
  for (const auto& n : nodes_)
    if (n.name == name) return &n;
  return nullptr;
}

ValueId Graph::value_id(std::string_view name) const {
  const Value* v = find_value(name);
  if (!v) fail("graph '{}' has no value named '{}'", name_, name);
  return v->id;
}

void Graph::revalidate() {
  for (auto& n : nodes_) {
    InferredValue out = infer_output(*this, n.kind, n.name, n.attrs, n.inputs);
    Value& v = values_[static_cast<std::size_t>(n.outputs.at(0))];
    v.shape = std::move(out.shape);
    v.dtype = out.dtype;
  }
}

}  // namespace telar::graph
