#pragma once
// An op's definition in one place: its name, how its output follows from its inputs (with the
// errors that name the node), what it costs, how its attributes print and where an accelerator
// runs it. One OpDef per OpKind, each in its own file under graph/op_defs/, gathered by
// op_def.cpp into a table indexed by OpKind and checked at compile time to cover every kind.
// The attributes themselves are plain structs in graph/op.hpp; the kernels live in ops/ (the
// reference) and in each backend, one file per op.
#include <string>
#include <string_view>
#include <vector>

#include "graph/cost.hpp"
#include "graph/shape_inference.hpp"

namespace telar::graph {

// A node about to be added, as its shape inference sees it, with the checks ops share. Every
// failed check throws telar::Error naming the op, the node and what does not fit.
class ShapeCheck {
 public:
  ShapeCheck(const Graph& graph, OpKind kind, const std::string& node, const Attrs& attrs,
             const std::vector<ValueId>& inputs)
      : graph_(graph), kind_(kind), node_(node), attrs_(attrs), inputs_(inputs) {}

  OpKind kind() const { return kind_; }
  template <typename A>
  const A& attr() const {
    return std::get<A>(attrs_);
  }
  std::size_t count() const { return inputs_.size(); }
  const Value& in(std::size_t i) const { return graph_.value(inputs_.at(i)); }

  [[noreturn]] void bad(const std::string& what) const;
  void arity(std::size_t lo, std::size_t hi) const;
  void rank(std::size_t i, int r, const char* layout) const;
  void dtype(std::size_t i, DType t) const;
  void shape_is(std::size_t i, const Shape& s) const;

 private:
  const Graph& graph_;
  OpKind kind_;
  const std::string& node_;
  const Attrs& attrs_;
  const std::vector<ValueId>& inputs_;
};

// How a node's output channels (dimension 1, after the batch) follow from its inputs' channels:
// what channel pruning (adapt/channel_groups.hpp) traces through a graph.
enum class ChannelFlow : std::uint8_t {
  // Channels that reach the op are not followed further (a reshape, a transpose, a reduction
  // over the channels, a loss): they cannot be pruned.
  Opaque,
  // Output channel c is computed from input 0's channel c alone; any other input is a weight
  // with one entry per channel along its dimension 0 (BatchNorm, an activation, pooling, a
  // depthwise convolution).
  PerChannel,
  // The inputs whose dimension aligned with the output's dimension 1 (NumPy broadcasting) has
  // the output's size meet channel by channel; the others broadcast over them (Add, a Concat
  // along another axis).
  Elementwise,
  // The output's channels are the inputs' channels, one input after another.
  Concatenate,
  // x[B,C,...] -> [B, C·(product of the rest)]: channel c becomes a run of consecutive features.
  Flatten,
  // Every output channel reads every input channel through the op's weights (dimension 0 of
  // the weights is the output channel, dimension 1 the input channel): a Linear or an
  // ungrouped convolution. The output's channels are new.
  Mix,
};

struct OpDef {
  std::string_view name;
  KernelFamily kernels;  // the backends' kernels that run it
  // The output's shape and dtype; checks the inputs and attributes (ShapeCheck).
  InferredValue (*infer)(const ShapeCheck& check) = nullptr;
  // Fills cost.macs for options.batch; the bytes arrive filled from the values' sizes and may
  // be corrected (an EmbeddingBag reads only the rows it looks up). nullptr: one arithmetic op
  // per output element.
  void (*cost)(const Graph& graph, const Node& node, const CostOptions& options,
               NodeCost& cost) = nullptr;
  // The attributes in a few words for dump(), e.g. "3x3 s2 p1 g32"; nullptr: nothing to say.
  std::string (*describe)(const Node& node) = nullptr;
  Lowering lowering = Lowering::Host;
  bool loss = false;
  // How channels flow through a node of this op; nullptr: ChannelFlow::Opaque.
  ChannelFlow (*channels)(const Graph& graph, const Node& node) = nullptr;
};

const OpDef& op_def(OpKind kind);
ChannelFlow channel_flow(const Graph& graph, const Node& node);
inline KernelFamily kernel_family(OpKind kind) { return op_def(kind).kernels; }

}  // namespace telar::graph
