#pragma once
// The model options shared by commands: --model NAME[:ARGS] or FILE.onnx, --input CxHxW,
// --classes N, --init file|random.
#include <optional>
#include <string>

#include "cli/common.hpp"
#include "graph/parameters.hpp"
#include "graph/zoo/zoo.hpp"

namespace telar::cli {

// A model with its weights: an ONNX file's, or random ones for a zoo model.
struct LoadedModel {
  graph::Graph graph;
  graph::ParameterSet weights;
};

// The graph of a zoo model or of an ONNX file (its structure; see load_model for its weights).
graph::Graph build_model(const std::string& model, const graph::zoo::ModelOptions& options);
// How a model is loaded. `random_weights`: initialised from `seed` (a zoo model always is; an
// ONNX file's own weights are used otherwise). `feed`: for an ONNX model, the shape of the
// samples it will be fed (a data set's), fitted to its input (onnx::check_feed); a zoo model is
// built for its --input instead.
struct LoadOptions {
  std::uint64_t seed = 0;
  bool random_weights = false;
  std::optional<Shape> feed;
  // For an ONNX file without --input: the sizes of the dimensions it leaves dynamic
  // (onnx::ImportOptions::dynamic_size).
  std::optional<Shape> dynamic_size;
};

// The model with its weights.
LoadedModel load_model(const std::string& model, const graph::zoo::ModelOptions& options,
                       const LoadOptions& load);

// The shape of one sample of the model's first input (without the batch dimension).
Shape sample_input(const graph::Graph& model);

// A batch of `batch` samples of a model's declared input (batch first), uniform in [0, 1) from
// `seed`: what infer and bench time a model on.
Tensor random_input(const Shape& declared, std::int64_t batch, std::uint64_t seed);

struct ModelOptions {
  std::string model;
  std::string input;
  std::int64_t classes = 0;
  std::string init;  // --init: "file", "random" or "" (the model's default)

  // --model is required unless it has a default or `required` is false (the command has
  // another way to name its model).
  void add_to(CLI::App& app, const std::string& default_model = "", bool required = true);
  graph::zoo::ModelOptions zoo_options() const;
  // Throws telar::Error where --model, --input, --classes or --init were given beside
  // --checkpoint, whose run records its model as it was trained.
  void refuse_beside_checkpoint() const;
  // --init random, or a zoo model; throws telar::Error for --init file with a zoo model.
  bool random_weights() const;
  graph::Graph build() const { return build_model(model, zoo_options()); }
  LoadedModel load(std::uint64_t seed, std::optional<Shape> feed = {},
                   std::optional<Shape> dynamic_size = {}) const {
    return load_model(model, zoo_options(),
                      {seed, random_weights(), std::move(feed), std::move(dynamic_size)});
  }
};

}  // namespace telar::cli
