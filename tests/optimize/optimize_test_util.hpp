#pragma once
// Shared by the inference pass tests: random weights and BatchNorm statistics, and a graph's
// evaluation-mode output on a backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "backend/backend.hpp"
#include "core/rng.hpp"
#include "graph/graph.hpp"
#include "graph/parameters.hpp"

namespace telar::optimize::testing {

// The graph's parameters initialized, and every BatchNorm's gamma, beta and running statistics
// made non-trivial (a fold of mean 0, variance 1, gamma 1, beta 0 would hide mistakes).
inline graph::ParameterSet weights_for(const graph::Graph& g, std::uint64_t seed) {
  graph::ParameterSet params = graph::ParameterSet::initialize(g, seed);
  Rng rng(seed + 1);
  for (const graph::Node& n : g.nodes()) {
    if (n.kind != graph::OpKind::BatchNorm2d) continue;
    const float lo[] = {0.5f, -0.5f, -0.5f, 0.5f}, hi[] = {1.5f, 0.5f, 0.5f, 2.0f};
    for (int i = 0; i < 4; ++i)
      for (float& v : params.at(n.inputs.at(static_cast<std::size_t>(i + 1))).span<float>())
        v = rng.uniform(lo[i], hi[i]);
  }
  return params;
}

inline Tensor eval_output(const graph::Graph& g, graph::ParameterSet& params, const Tensor& x,
                          const std::string& backend = "cpu") {
  auto exe = backend::compile(backend::parse_backend_spec(backend), g, params);
  exe->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
  return exe->output(0).clone();
}

// max |a - b| / max |a|
inline double relative_difference(const Tensor& a, const Tensor& b) {
  double diff = 0.0, scale = 0.0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(a.f32()[i] - b.f32()[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(a.f32()[i])));
  }
  return diff / std::max(scale, 1e-30);
}

// A zoo model and the input (C x H x W) a quick test builds it for; a test's parameter.
struct ZooCase {
  const char* model;
  Shape input;
};

// A test name from a zoo model's name ("mobilenet_v1:0.5" -> "mobilenet_v1_0_5").
inline std::string zoo_case_name(const ::testing::TestParamInfo<ZooCase>& info) {
  std::string name = info.param.model;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

inline int count_nodes(const graph::Graph& g, graph::OpKind kind) {
  return static_cast<int>(std::count_if(g.nodes().begin(), g.nodes().end(),
                                        [&](const graph::Node& n) { return n.kind == kind; }));
}

}  // namespace telar::optimize::testing
