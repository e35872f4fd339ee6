#pragma once
#include <string>

#include "graph/graph.hpp"

namespace telar::graph {

// A readable text dump: inputs, one line per node (op, attributes, output shape, parameters,
// MACs per sample), outputs and totals.
std::string dump(const Graph& graph);
// Short attribute summary of a node, e.g. "3x3 s2 p1 g32" or "784->256".
std::string describe_attrs(const Node& node);

}  // namespace telar::graph
