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
};

const OpDef& op_def(OpKind kind);
inline KernelFamily kernel_family(OpKind kind) { return op_def(kind).kernels; }

}  // namespace telar::graph
