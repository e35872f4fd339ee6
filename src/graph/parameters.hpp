#pragma once
// The tensors of a graph's parameters and buffers, indexed by ValueId.
#include <cstdint>
#include <vector>

#include "core/tensor.hpp"
#include "graph/graph.hpp"

namespace telar::graph {

class ParameterSet {
 public:
  ParameterSet() = default;
  // Allocates every parameter and buffer of `graph` and fills it from its initializer, with a
  // stream per value derived from `seed` (so adding a layer does not change the others).
  static ParameterSet initialize(const Graph& graph, std::uint64_t seed);
  // Zero tensors shaped like the graph's trainable parameters (gradients, optimizer state).
  static ParameterSet zeros_like_parameters(const Graph& graph);

  bool has(ValueId id) const;
  Tensor& at(ValueId id);
  const Tensor& at(ValueId id) const;
  void set(ValueId id, Tensor t);
  // ValueIds with a tensor, ascending.
  std::vector<ValueId> ids() const;
  std::int64_t total_bytes() const;
  void zero();

 private:
  std::vector<Tensor> tensors_;  // indexed by ValueId; undefined where the value has none
};

}  // namespace telar::graph
