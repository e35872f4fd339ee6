#pragma once
// The model options shared by commands: --model NAME[:ARGS], --input CxHxW, --classes N.
#include <string>

#include "cli/common.hpp"
#include "graph/zoo/zoo.hpp"

namespace telar::cli {

struct ModelOptions {
  std::string model;
  std::string input;
  std::int64_t classes = 0;

  void add_to(CLI::App& app, const std::string& default_model = "");
  graph::zoo::ModelOptions zoo_options() const;
  graph::Graph build() const;
};

}  // namespace telar::cli
