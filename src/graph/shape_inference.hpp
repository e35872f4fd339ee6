#pragma once
#include "graph/graph.hpp"

namespace telar::graph {

struct InferredValue {
  Shape shape;
  DType dtype = DType::F32;
};

// Output shape and dtype of a node of `kind` over `inputs`; throws telar::Error naming the node
// and the mismatch (e.g. a Linear whose input width does not match its in_features).
InferredValue infer_output(const Graph& graph, OpKind kind, const std::string& node_name,
                           const Attrs& attrs, const std::vector<ValueId>& inputs);

// Output size of a sliding window along one axis (floor mode, like PyTorch).
std::int64_t window_output_size(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                                std::int64_t pad, std::int64_t dilation = 1);

}  // namespace telar::graph
