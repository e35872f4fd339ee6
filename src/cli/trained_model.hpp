#pragma once
// A model trained by `telar train`, rebuilt from its checkpoint: the graph (without the loss) as
// the run built it (a zoo model, or its ONNX file imported again and fed the run's samples) and
// the trained weights. Shared by eval and export.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "graph/graph.hpp"
#include "graph/loss.hpp"
#include "graph/parameters.hpp"

namespace telar::cli {

struct TrainedModel {
  std::filesystem::path checkpoint;  // the checkpoint file
  nlohmann::json config;             // the run's configuration, as the checkpoint records it
  graph::Graph net;                  // without the loss
  graph::LossKind loss = graph::LossKind::CrossEntropy;
  graph::ParameterSet weights;       // net's parameters and buffers, trained
};

// `checkpoint`: a run directory or its checkpoint file; `flag` names it in errors. Throws
// telar::Error for a missing, corrupted or foreign checkpoint.
TrainedModel load_trained_model(const std::string& checkpoint, const std::string& flag);

}  // namespace telar::cli
