#pragma once
// The model IR: a Graph is a topologically ordered list of Nodes over Values.
// Parameters (trainable) and buffers (e.g. BatchNorm running statistics) are Values with
// initializers; their tensors live in a ParameterSet beside the graph (graph/parameters.hpp),
// so structural edits are functions from (Graph, ParameterSet) to (Graph, ParameterSet).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "core/shape.hpp"
#include "graph/op.hpp"

namespace telar::graph {

using ValueId = std::int32_t;
using NodeId = std::int32_t;
inline constexpr ValueId kNoValue = -1;

enum class ValueKind : std::uint8_t { Input, Parameter, Buffer, Activation };

struct Initializer {
  enum class Kind : std::uint8_t { Zeros, Ones, Constant, Uniform, Normal };
  Kind kind = Kind::Zeros;
  float a = 0.0f;  // Constant: value; Uniform: low; Normal: mean
  float b = 0.0f;  // Uniform: high; Normal: standard deviation

  static Initializer zeros() { return {}; }
  static Initializer ones() { return {Kind::Ones}; }
  static Initializer constant(float v) { return {Kind::Constant, v, 0.0f}; }
  static Initializer uniform(float lo, float hi) { return {Kind::Uniform, lo, hi}; }
  static Initializer normal(float mean, float stddev) { return {Kind::Normal, mean, stddev}; }
};

struct Value {
  ValueId id = kNoValue;
  std::string name;
  Shape shape;  // dim 0 of inputs and activations is kBatchDim
  DType dtype = DType::F32;
  ValueKind kind = ValueKind::Activation;
  Initializer init;       // parameters and buffers
  NodeId producer = -1;   // activations
};

struct Node {
  NodeId id = -1;
  std::string name;
  OpKind kind = OpKind::ReLU;
  Attrs attrs;
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;

  template <typename A> const A& attr() const { return std::get<A>(attrs); }
};

class Graph {
 public:
  explicit Graph(std::string name = "model") : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  ValueId add_input(std::string name, Shape shape, DType dtype = DType::F32);
  ValueId add_parameter(std::string name, Shape shape, Initializer init);
  ValueId add_buffer(std::string name, Shape shape, Initializer init);
  // Adds a node after the existing ones, infers its output shape (throws telar::Error if the
  // inputs do not fit the op) and returns its output value.
  ValueId add_node(OpKind kind, std::string name, Attrs attrs, std::vector<ValueId> inputs);
  void add_output(ValueId value);

  const Value& value(ValueId id) const { return values_.at(static_cast<std::size_t>(id)); }
  Value& value(ValueId id) { return values_.at(static_cast<std::size_t>(id)); }
  const Node& node(NodeId id) const { return nodes_.at(static_cast<std::size_t>(id)); }
  Node& node(NodeId id) { return nodes_.at(static_cast<std::size_t>(id)); }
  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }

  std::vector<ValueId> parameters() const;  // trainable, in creation order
  std::vector<ValueId> buffers() const;
  std::int64_t parameter_count() const;     // number of trainable scalars
  // The nodes that read a value, in order.
  std::vector<NodeId> consumers(ValueId value) const;

  const Value* find_value(std::string_view name) const;
  const Node* find_node(std::string_view name) const;
  ValueId value_id(std::string_view name) const;  // throws if missing

  // Re-runs shape inference over every node (after a structural edit); throws on mismatch.
  void revalidate();

 private:
  ValueId new_value(std::string name, Shape shape, DType dtype, ValueKind kind);
  std::string name_;
  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
};

}  // namespace telar::graph
