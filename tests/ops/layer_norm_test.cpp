// LayerNorm over the last axis: values by hand, the definition computed in double over many
// rows (the threaded path), and every gradient against finite differences.
#include <gtest/gtest.h>

#include <cmath>

#include "ops/kernels.hpp"
#include "test_util.hpp"

using namespace telar;
using namespace telar::ops;
using namespace telar::ops::testing;

TEST(OpsLayerNorm, ForwardByHand) {
  // Rows of [1, 3, 4] with eps 0.25: [1, 2, 3, 4] has mean 2.5 and variance 1.25, so
  // xhat = [-1.5, -0.5, 0.5, 1.5] / sqrt(1.5); a constant row normalises to 0 (the bias alone);
  // [1000, 1001, 1002, 1003] is the first row shifted, and normalises as it does (a variance
  // taken as mean(x^2) - mean(x)^2 in float would lose it).
  const LayerNormAttrs a{.features = 4, .eps = 0.25f};
  const Tensor x = f32({1, 2, 3, 4, 2, 2, 2, 2, 1000, 1001, 1002, 1003}, {1, 3, 4});
  const Tensor scale = f32({1, 2, 1, 0.5f}, {4}), bias = f32({0, 0, 1, -1}, {4});
  Tensor y(x.shape());
  layer_norm_forward(a, x, scale, bias, y);
  const float s = 1.0f / std::sqrt(1.5f);
  expect_values(y,
                {-1.5f * s, -1.0f * s, 1 + 0.5f * s, -1 + 0.75f * s,  //
                 0, 0, 1, -1,                                         //
                 -1.5f * s, -1.0f * s, 1 + 0.5f * s, -1 + 0.75f * s},
                1e-4f);
}

TEST(OpsLayerNorm, ManyRowsEqualTheDefinition) {
  // 4 x 300 rows of 40 (more elements than the kernel splits across threads from), against
  // the definition in double.
  Rng rng(17);
  const LayerNormAttrs a{.features = 40, .eps = 1e-5f};
  const Tensor x = uniform({4, 300, 40}, rng, -3.0f, 5.0f), scale = uniform({40}, rng),
               bias = uniform({40}, rng);
  Tensor y(x.shape()), want(x.shape());
  layer_norm_forward(a, x, scale, bias, y);
  for (std::int64_t r = 0; r < 1200; ++r) {
    const float* row = x.f32() + r * 40;
    double mean = 0.0, var = 0.0;
    for (int k = 0; k < 40; ++k) mean += row[k] / 40.0;
    for (int k = 0; k < 40; ++k) var += (row[k] - mean) * (row[k] - mean) / 40.0;
    for (int k = 0; k < 40; ++k)
      want.f32()[r * 40 + k] = static_cast<float>(
          (row[k] - mean) / std::sqrt(var + 1e-5) * scale.f32()[k] + bias.f32()[k]);
  }
  expect_close(y, want, 1e-5f);
}

TEST(OpsLayerNorm, GradientsMatchFiniteDifferences) {
  Rng rng(29);
  const LayerNormAttrs a{.features = 7, .eps = 1e-3f};
  Tensor x = uniform({2, 3, 7}, rng), scale = uniform({7}, rng), bias = uniform({7}, rng);
  Tensor y(x.shape());
  const Tensor r = uniform(y.shape(), rng);
  auto objective = [&] {
    layer_norm_forward(a, x, scale, bias, y);
    return project(y, r);
  };
  Tensor dx(x.shape()), dscale({7}), dbias({7});
  layer_norm_backward(a, x, scale, r, &dx, &dscale, &dbias);
  expect_gradient("layer norm dx", x, dx, objective);
  expect_gradient("layer norm dscale", scale, dscale, objective);
  expect_gradient("layer norm dbias", bias, dbias, objective);
  // Without dx, the weights' gradients are the same.
  Tensor dscale_only({7});
  layer_norm_backward(a, x, scale, r, nullptr, &dscale_only, nullptr);
  expect_close(dscale_only, dscale, 1e-6f);
}
