#pragma once
// The model zoo. On the command line a model is NAME[:ARGS] plus options, e.g.
// "mlp:784-256-128-10", "mnist_cnn", "mobilenet_v1:0.5" with --input 3x224x224 --classes 10.
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace telar::graph::zoo {

struct ModelOptions {
  std::optional<Shape> input;            // C x H x W (or features), without batch
  std::optional<std::int64_t> classes;
};

struct ModelInfo {
  std::string name;
  std::string args;         // what :ARGS means, "" if none
  std::string description;
  Shape default_input;
  std::int64_t default_classes;
};

const std::vector<ModelInfo>& models();
// Builds NAME[:ARGS]; throws telar::Error for an unknown model or bad arguments.
Graph build(const std::string& spec, const ModelOptions& options = {});

Graph mlp(const std::vector<std::int64_t>& widths, const Shape& input);
Graph mnist_cnn(const Shape& input, std::int64_t classes);
Graph alexnet(const Shape& input, std::int64_t classes);
Graph mobilenet_v1(const Shape& input, std::int64_t classes, double width_multiplier);
Graph resnet(int depth, const Shape& input, std::int64_t classes);

}  // namespace telar::graph::zoo
