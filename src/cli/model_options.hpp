#pragma once
// The model options shared by commands: --model NAME[:ARGS] or FILE.onnx, --input CxHxW,
// --classes N.
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
// The model with its weights: an ONNX file's own, a zoo model's initialised from `seed`.
LoadedModel load_model(const std::string& model, const graph::zoo::ModelOptions& options,
                       std::uint64_t seed);

struct ModelOptions {
  std::string model;
  std::string input;
  std::int64_t classes = 0;

  void add_to(CLI::App& app, const std::string& default_model = "");
  graph::zoo::ModelOptions zoo_options() const;
  graph::Graph build() const { return build_model(model, zoo_options()); }
  LoadedModel load(std::uint64_t seed) const { return load_model(model, zoo_options(), seed); }
};

}  // namespace telar::cli
