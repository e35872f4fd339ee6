#pragma once
// What every inference pass is built on: a graph copied node by node into a new one, where the
// pass drops, replaces or fuses nodes on the way. The graph's inputs keep their order; a
// parameter or buffer is copied (its tensor shared, not duplicated) when a node first reads it,
// so weights that no node reads any more (a folded BatchNorm's) are left behind.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "graph/parameters.hpp"

namespace telar::optimize {

// A pass's result: the new graph, its weights and how many rewrites the pass made.
struct Rewritten {
  graph::Graph graph;
  graph::ParameterSet params;
  int rewrites = 0;
};

class GraphRewriter {
 public:
  GraphRewriter(const graph::Graph& source, const graph::ParameterSet& params);

  const graph::Graph& source() const { return source_; }
  const graph::ParameterSet& source_params() const { return source_params_; }
  // The new value standing for a source value.
  graph::ValueId map(graph::ValueId source_value);
  // From now on, readers of `source_value` (the output of a dropped or fused node) read `now`.
  void redirect(graph::ValueId source_value, graph::ValueId now);
  // The new values of a source node's inputs, in order.
  std::vector<graph::ValueId> map_inputs(const graph::Node& node);
  // The node as it was, reading the new values of its inputs.
  graph::ValueId copy(const graph::Node& node);
  // A node of the new graph (inputs are new values).
  graph::ValueId add(graph::OpKind kind, const std::string& name, graph::Attrs attrs,
                     std::vector<graph::ValueId> inputs);
  // A new parameter holding `tensor`, named `base` or, where taken, base with a suffix.
  graph::ValueId add_parameter(const std::string& base, Tensor tensor);

  Rewritten finish(int rewrites);

 private:
  const graph::Graph& source_;
  const graph::ParameterSet& source_params_;
  graph::Graph graph_;
  graph::ParameterSet params_;
  std::vector<graph::ValueId> map_;  // by source ValueId; kNoValue where not yet made
};

// The shape of every fusing pass: `absorbs` maps a node to the later node whose work it takes
// over (a Conv2d and its BatchNorm, its residual Add, its activation). The pair becomes the node
// `replace` adds to the rewriter, which stands for both outputs; an absorbed node is dropped
// (the node before it computes its output) and every other node is copied. The rewrite count
// is the number of pairs.
using FusePair = std::function<graph::ValueId(GraphRewriter& rewriter, const graph::Node& node,
                                              const graph::Node& absorbed)>;
Rewritten fuse_pairs(const graph::Graph& graph, const graph::ParameterSet& params,
                     const std::map<graph::NodeId, graph::NodeId>& absorbs,
                     const FusePair& replace);

// A chain of nodes that computes what one op does (an op PyTorch writes out as several): its
// last node becomes one node of `kind` with `attrs`, reading `inputs` (source values); `inner`,
// the chain's other nodes, are dropped (their results must be read inside the chain alone).
struct Chain {
  graph::OpKind kind = graph::OpKind::Count;
  graph::Attrs attrs;
  std::vector<graph::ValueId> inputs;
  std::vector<graph::NodeId> inner;
};
// The chain that ends at a node, if one does.
using MatchChain = std::function<std::optional<Chain>(const graph::Node& last)>;
// Every node at which `match` finds a chain becomes that chain's one node (under the last
// node's name); every other node is copied. The rewrite count is the number of chains.
Rewritten fuse_chains(const graph::Graph& graph, const graph::ParameterSet& params,
                      const MatchChain& match);

// Facts about the source graph the passes ask.
bool is_graph_output(const graph::Graph& graph, graph::ValueId value);
// Whether `value` is read by exactly one node and is not an output of the graph: a node that
// produces it may be changed without anyone else seeing.
bool read_only_by_one(const graph::Graph& graph, graph::ValueId value);
// The node that makes `value`, when `value` is read by nothing but its one reader and the node
// is of `kind`; null otherwise.
const graph::Node* sole_producer(const graph::Graph& graph, graph::ValueId value,
                                 graph::OpKind kind);
// Whether `value` is a weight or buffer (with its tensor) of shape [n]: one value per feature.
bool weight_vector(const graph::Graph& graph, const graph::ParameterSet& params,
                   graph::ValueId value, std::int64_t n);
// The value of a one-element constant (a weight or buffer with its tensor); none otherwise.
std::optional<float> scalar_constant(const graph::Graph& graph, const graph::ParameterSet& params,
                                     graph::ValueId value);

}  // namespace telar::optimize
