#include "cli/model_options.hpp"

#include <filesystem>

#include "core/error.hpp"
#include "core/parse.hpp"
#include "core/rng.hpp"
#include "onnx/import.hpp"

namespace telar::cli {

namespace {

onnx::ImportedModel import(const std::string& model, const graph::zoo::ModelOptions& options,
                           std::optional<Shape> feed = {}, std::optional<Shape> dynamic_size = {}) {
  require(!options.classes, "--classes does not apply to an ONNX model (its classes are fixed "
                            "in the file); leave it out");
  return onnx::import_model(model, {options.input, std::move(feed), std::move(dynamic_size)});
}

// The zoo model; where there is none of that name but a run directory or a checkpoint file (a
// user's likely slip), the way to give one instead of "unknown model".
graph::Graph build_zoo(const std::string& model, const graph::zoo::ModelOptions& options) {
  try {
    return graph::zoo::build(model, options);
  } catch (const Error&) {
    std::error_code ec;
    const std::filesystem::path path(model);
    require(!std::filesystem::is_directory(path, ec) &&
                !(std::filesystem::is_regular_file(path, ec) && path.extension() == ".telar"),
            "--model '{}' is a run (or its checkpoint), not a model name or an ONNX file: give "
            "it as --checkpoint {} (telar train continues a run with --resume)",
            model, model);
    throw;
  }
}

}  // namespace

Shape sample_input(const graph::Graph& model) {
  const Shape& s = model.value(model.inputs().at(0)).shape;
  return Shape(s.begin() + 1, s.end());
}

Tensor random_input(const Shape& declared, std::int64_t batch, std::uint64_t seed) {
  Tensor x(bind_batch(declared, batch));
  Rng rng(seed);
  for (auto& v : x.span<float>()) v = rng.uniform(0.0f, 1.0f);
  return x;
}

graph::Graph build_model(const std::string& model, const graph::zoo::ModelOptions& options) {
  if (onnx::is_onnx_file(model)) return import(model, options).graph;
  return build_zoo(model, options);
}

LoadedModel load_model(const std::string& model, const graph::zoo::ModelOptions& options,
                       const LoadOptions& load) {
  if (onnx::is_onnx_file(model)) {
    onnx::ImportedModel m = import(model, options, load.feed, load.dynamic_size);
    if (load.random_weights) {
      graph::ParameterSet fresh = graph::ParameterSet::initialize(m.graph, load.seed);
      for (graph::ValueId id : m.constants) fresh.set(id, m.weights.at(id));
      m.weights = std::move(fresh);
    }
    return {std::move(m.graph), std::move(m.weights)};
  }
  graph::Graph g = build_zoo(model, options);
  graph::ParameterSet weights = graph::ParameterSet::initialize(g, load.seed);
  return {std::move(g), std::move(weights)};
}

bool ModelOptions::random_weights() const {
  if (onnx::is_onnx_file(model)) return init == "random";
  require(init != "file", "--init file: {} is a zoo model, whose weights are random (--seed); "
                          "--init file takes an ONNX model's own",
          model);
  return true;
}

void ModelOptions::add_to(CLI::App& app, const std::string& default_model, bool required) {
  model = default_model;
  auto* opt = app.add_option("--model", model,
                             "model NAME[:ARGS] or FILE.onnx, e.g. mlp:784-256-128-10, "
                             "mnist_cnn, mobilenet_v1:0.5 (telar models), resnet18.onnx "
                             "(docs/onnx.md)");
  if (default_model.empty() && required) opt->required();
  app.add_option("--input", input, "input shape CxHxW (default: the model's, or the data's)");
  app.add_option("--classes", classes, "number of classes (default: the model's, or the data's)")
      ->check(at_least(1));
  app.add_option("--init", init,
                 "an ONNX model's weights: file (its own, the default) or random (PyTorch's "
                 "initialisation of each layer, from --seed)")
      ->check(CLI::IsMember({"file", "random"}));
}

graph::zoo::ModelOptions ModelOptions::zoo_options() const {
  graph::zoo::ModelOptions o;
  if (!input.empty()) o.input = parse_dims(input, "--input");
  if (classes > 0) o.classes = classes;
  return o;
}

void ModelOptions::refuse_beside_checkpoint() const {
  require(model.empty(),
          "--checkpoint RUN and --model '{}' both name the model; give one of them, not both",
          model);
  require(input.empty() && classes == 0 && init.empty(),
          "--checkpoint records the model as it was trained; --input, --classes and --init apply "
          "to --model: leave them out");
}

}  // namespace telar::cli
