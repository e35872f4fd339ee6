#pragma once
// A model compiled for inference: the inference passes (optimize/inference.hpp) run over a copy
// of the graph and its weights, and the result is compiled for the backend. What it runs is
// evaluation-mode forward only; the caller's graph and weights stay as they were, and
// parameters_updated() re-derives the folded weights from them.
#include <memory>
#include <optional>

#include "backend/backend.hpp"
#include "optimize/inference.hpp"

namespace telar::backend {

// The passes each backend gets: cpu all of them; cuda those that need no post-op kernels
// (Dropout removal, BatchNorm and bias folding); sim none (its host summary and node-by-node
// simulation describe the model as built).
std::optional<optimize::InferenceOptions> inference_passes(const BackendSpec& spec);

// `optimize` false: the graph as built (`--no-optimize`), compiled like compile() does.
// `graph` and `params` must outlive the executable.
std::unique_ptr<Executable> compile_for_inference(const BackendSpec& spec,
                                                  const graph::Graph& graph,
                                                  graph::ParameterSet& params, bool optimize = true,
                                                  const CompileOptions& options = {});

}  // namespace telar::backend
