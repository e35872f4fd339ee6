#include "cli/trained_model.hpp"

#include "adapt/prune.hpp"
#include "backend/inference.hpp"
#include "cli/quantized_model.hpp"
#include "core/error.hpp"
#include "core/parse.hpp"
#include "graph/zoo/zoo.hpp"
#include "onnx/import.hpp"
#include "train/data/data_loader.hpp"
#include "train/evaluate.hpp"

namespace telar::cli {

namespace fs = std::filesystem;

TrainedModel load_trained_model(const std::string& checkpoint, const std::string& flag) {
  TrainedModel m;
  m.checkpoint = checkpoint_file(checkpoint, flag);
  const train::Checkpoint ckpt = train::read_checkpoint(m.checkpoint);
  m.config = nlohmann::json::parse(ckpt.trainer.config_json, nullptr, false);
  if (!m.config.is_object() || !m.config.contains("model"))
    fail("checkpoint {} does not record its model configuration; it was not written by telar "
         "train",
         m.checkpoint.string());
  m.net = original_model(m.config);
  // A network adapted by telar adapt: the model it came from with its groups' channel counts.
  if (m.config.contains("channels"))
    m.net = adapt::with_channel_counts(
        m.net, m.config["channels"].get<std::map<std::string, std::int64_t>>());
  m.loss = graph::parse_loss(m.config.value("loss", std::string("cross_entropy")));
  m.weights = graph::ParameterSet::initialize(m.net, 0);
  restore_trained_weights(ckpt, m.checkpoint, m.net, m.loss, m.weights);
  m.quantization = read_quantization(m.checkpoint);
  return m;
}

double test_accuracy(TrainedModel& trained, const train::Dataset& test,
                     const backend::BackendSpec& spec, backend::Precision precision,
                     std::shared_ptr<const backend::QuantizationTable> quantization,
                     bool optimize) {
  const graph::Graph with_loss = graph::with_loss(trained.net, trained.loss);
  backend::CompileOptions options;
  options.precision = precision;
  options.quantization = std::move(quantization);
  auto exe = backend::compile_for_inference(spec, with_loss, trained.weights, optimize, options);
  train::DataLoader loader(test, {256, false, false, 0});
  return train::evaluate_classifier(*exe, loader).accuracy;
}

graph::Graph original_model(const nlohmann::json& config) {
  const Shape input = parse_dims(config.value("input", std::string("")), "checkpoint input shape");
  const std::string model = config["model"].get<std::string>();
  if (onnx::is_onnx_file(model)) {
    // The file's graph fed the run's samples, as telar train built it.
    const std::string onnx_input = config.value("onnx_input", std::string(""));
    onnx::ImportOptions io;
    if (!onnx_input.empty()) io.input = parse_dims(onnx_input, "checkpoint ONNX input shape");
    io.feed = input;
    return onnx::import_model(model, io).graph;
  }
  graph::zoo::ModelOptions zoo;
  zoo.input = input;
  zoo.classes = config.value("classes", std::int64_t{10});
  return graph::zoo::build(model, zoo);
}

fs::path checkpoint_file(const std::string& checkpoint, const std::string& flag) {
  fs::path file = checkpoint;
  const bool directory = fs::is_directory(file);
  if (directory) file /= train::kCheckpointFileName;
  if (!fs::exists(file)) {
    if (directory)
      fail(
          "{} {}: not a run (it has no {}); give the run directory of a telar train, adapt or "
          "quantize",
          flag, checkpoint, train::kCheckpointFileName);
    fail(
        "{} {}: no such run directory or checkpoint file; give the run directory of a telar "
        "train, adapt or quantize",
        flag, checkpoint);
  }
  return file;
}

void restore_trained_weights(const train::Checkpoint& ckpt, const fs::path& file,
                             const graph::Graph& net, graph::LossKind loss,
                             graph::ParameterSet& weights) {
  // The checkpoint holds the training graph's state (the net and its loss).
  const graph::Graph trained = graph::with_loss(net, loss);
  graph::ParameterSet params = graph::ParameterSet::initialize(trained, 0);
  train::RestoreOptions ro;
  ro.restore_optimizer = false;
  train::restore_checkpoint(ckpt, file, trained, params, nullptr, ro);
  for (graph::ValueId id : weights.ids()) weights.set(id, params.at(id));
}

}  // namespace telar::cli
