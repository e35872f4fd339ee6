#pragma once
// Inference compilation's graph passes, in order: Dropout removed, BatchNorm folded into the
// Conv2d before it, residual Adds and activations fused into the Conv2d or Linear that produces
// their input (post-ops). The result computes the graph's outputs in evaluation mode; it is
// never trained. `telar models show --optimized` prints it; docs/inference.md describes it.
#include <string_view>
#include <vector>

#include "graph/graph.hpp"
#include "graph/parameters.hpp"

namespace telar::optimize {

struct InferenceOptions {
  // Post-op fusion (the residual sum, activations): for backends whose kernels run post-ops
  // (cpu). Off, only Dropout removal, BatchNorm folding and bias folding run.
  bool fuse = true;
};

struct PassCount {
  std::string_view pass;
  int rewrites = 0;
};

struct InferenceGraph {
  graph::Graph graph;
  graph::ParameterSet params;  // shares the source's tensors where a pass left them as they were
  std::vector<PassCount> passes;
};

InferenceGraph optimize_for_inference(const graph::Graph& graph, const graph::ParameterSet& params,
                                      const InferenceOptions& options = {});

}  // namespace telar::optimize
