#pragma once
// A model trained by `telar train`, rebuilt from its checkpoint: the graph (without the loss) as
// the run built it (a zoo model, or its ONNX file imported again and fed the run's samples) and
// the trained weights. Shared by eval and export.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "backend/backend.hpp"
#include "backend/quantization.hpp"
#include "graph/graph.hpp"
#include "graph/loss.hpp"
#include "graph/parameters.hpp"
#include "train/checkpoint.hpp"
#include "train/data/dataset.hpp"

namespace telar::cli {

struct TrainedModel {
  std::filesystem::path checkpoint;  // the checkpoint file
  nlohmann::json config;             // the run's configuration, as the checkpoint records it
  graph::Graph net;                  // without the loss
  graph::LossKind loss = graph::LossKind::CrossEntropy;
  graph::ParameterSet weights;       // net's parameters and buffers, trained
  // A quantized model's calibration (telar quantize; cli/quantized_model.hpp), else nullptr.
  std::shared_ptr<const backend::QuantizationTable> quantization;
};

// `trained`'s accuracy on `test` (every sample, in order), compiled for inference on `spec` at
// `precision` (int8: with `quantization`) or, with `optimize` false, as built (bench --accuracy,
// quantize).
double test_accuracy(TrainedModel& trained, const train::Dataset& test,
                     const backend::BackendSpec& spec, backend::Precision precision,
                     std::shared_ptr<const backend::QuantizationTable> quantization,
                     bool optimize = true);

// `checkpoint`: a run directory or its checkpoint file; `flag` names it in errors. Throws
// telar::Error for a missing, corrupted or foreign checkpoint.
TrainedModel load_trained_model(const std::string& checkpoint, const std::string& flag);

// The model a run's configuration names, as built before any training or adaptation (a zoo
// model for its input and classes, or its ONNX file imported again and fed its samples).
graph::Graph original_model(const nlohmann::json& config);

// The checkpoint file of `checkpoint` (a run directory or the file itself), which must exist.
std::filesystem::path checkpoint_file(const std::string& checkpoint, const std::string& flag);

// `net`'s trained parameters and buffers from `ckpt`, a checkpoint of `net` trained with `loss`
// (whose training graph the checkpoint's fingerprint names), into `weights`.
void restore_trained_weights(const train::Checkpoint& ckpt, const std::filesystem::path& file,
                             const graph::Graph& net, graph::LossKind loss,
                             graph::ParameterSet& weights);

}  // namespace telar::cli
