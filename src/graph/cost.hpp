#pragma once
// Cost model per op: multiply-accumulates and bytes moved (inputs read, parameters read,
// outputs written, fp32), for a given batch size. Each op's MACs are in its definition
// (graph/op_defs/).
#include <cstdint>

#include "graph/graph.hpp"

namespace telar::graph {

struct NodeCost {
  std::int64_t macs = 0;           // multiply-accumulates (or the dominant arithmetic op)
  std::int64_t input_bytes = 0;    // activations read
  std::int64_t param_bytes = 0;    // parameters and buffers read
  std::int64_t output_bytes = 0;   // activations written
  std::int64_t bytes() const { return input_bytes + param_bytes + output_bytes; }
};

struct CostOptions {
  std::int64_t batch = 1;
  // EmbeddingBag work depends on the number of indices, unknown until run time.
  double indices_per_bag = 1.0;
};

NodeCost node_cost(const Graph& graph, const Node& node, const CostOptions& options);
NodeCost graph_cost(const Graph& graph, const CostOptions& options);  // sum over nodes
// Elements of a value with the batch dimension bound (dynamic dimensions count as 0); the ops'
// cost functions (graph/op_defs/) count their MACs with it.
std::int64_t numel_at(const Graph& graph, ValueId id, std::int64_t batch);

// Where a node runs on an accelerator (the sim backend lowers by this).
Lowering node_lowering(const Node& node);

}  // namespace telar::graph
