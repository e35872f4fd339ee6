#pragma once
// What the reduced-precision tests (bf16 in cpu_backend_test, int8 in int8_test) share: the zoo
// models they compare with fp32, weights that keep those models' activations alive, and the
// largest difference of two outputs with the output's magnitude.
#include <algorithm>
#include <cmath>
#include <utility>

#include "core/rng.hpp"
#include "graph/graph.hpp"
#include "graph/parameters.hpp"

namespace telar::testing {

struct ReducedPrecisionCase {
  const char* model;
  Shape input;
};

// Depthwise and residual CNNs, a plain CNN and an MLP (Linear only).
inline const ReducedPrecisionCase kReducedPrecisionCases[] = {{"mobilenet_v1:0.5", {3, 64, 64}},
                                                              {"resnet18", {3, 64, 64}},
                                                              {"mnist_cnn", {1, 28, 28}},
                                                              {"mlp:784-256-10", {784}}};

// Random weights with positive BatchNorm shifts, which keep a deep ReLU network's activations
// alive (else MobileNet's features die out and its output is the classifier's bias alone).
inline graph::ParameterSet live_weights(const graph::Graph& g) {
  graph::ParameterSet params = graph::ParameterSet::initialize(g, 5);
  Rng rng(6);
  for (const graph::Node& n : g.nodes())
    if (n.kind == graph::OpKind::BatchNorm2d)
      for (float& v : params.at(n.inputs[2]).span<float>()) v = rng.uniform(0.1f, 0.5f);
  return params;
}

// {max |got - want|, max |want|}.
inline std::pair<double, double> max_difference(const Tensor& got, const Tensor& want) {
  double diff = 0, scale = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(got.f32()[i] - want.f32()[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(want.f32()[i])));
  }
  return {diff, scale};
}

}  // namespace telar::testing
