#pragma once
// What the CPU and CUDA executables keep alike: the graph and the caller's parameters, the
// gradients, the compile options (seed, input gradients), the name, the parameters' version
// (bumped by parameters_updated()) and the random stream, with their accessors.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.hpp"
#include "backend/executable.hpp"

namespace telar::backend {

class CompiledExecutable : public Executable {
 public:
  graph::ParameterSet& gradients() override { return grads_; }
  void parameters_updated() override { ++params_version_; }
  const graph::Graph& graph() const override { return graph_; }
  std::string name() const override { return name_; }
  void set_random_stream(std::uint64_t stream) override { random_stream_ = stream; }

 protected:
  CompiledExecutable(const graph::Graph& graph, graph::ParameterSet& params,
                     const CompileOptions& options, std::string name)
      : graph_(graph),
        params_(params),
        grads_(graph::ParameterSet::zeros_like_parameters(graph)),
        seed_(options.seed),
        input_gradients_(options.input_gradients),
        name_(std::move(name)) {}

  const graph::Graph& graph_;
  graph::ParameterSet& params_;
  graph::ParameterSet grads_;
  std::uint64_t seed_;
  std::vector<graph::ValueId> input_gradients_;
  std::string name_;
  std::uint64_t params_version_ = 0;
  std::uint64_t random_stream_ = 0;
};

}  // namespace telar::backend
