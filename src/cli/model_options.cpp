#include "cli/model_options.hpp"

#include "core/error.hpp"
#include "core/parse.hpp"

namespace telar::cli {

void ModelOptions::add_to(CLI::App& app, const std::string& default_model) {
  model = default_model;
  auto* opt = app.add_option("--model", model, "model NAME[:ARGS], e.g. mlp:784-256-128-10, "
                                                "mnist_cnn, mobilenet_v1:0.5 (telar models)");
  if (default_model.empty()) opt->required();
  app.add_option("--input", input, "input shape CxHxW (default: the model's, or the data's)");
  app.add_option("--classes", classes, "number of classes (default: the model's, or the data's)")
      ->check(at_least(1));
}

graph::zoo::ModelOptions ModelOptions::zoo_options() const {
  graph::zoo::ModelOptions o;
  if (!input.empty()) o.input = parse_dims(input, "--input");
  if (classes > 0) o.classes = classes;
  return o;
}

graph::Graph ModelOptions::build() const { return graph::zoo::build(model, zoo_options()); }

}  // namespace telar::cli
