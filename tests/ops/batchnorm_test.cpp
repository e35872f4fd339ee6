#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "ops/kernels.hpp"
#include "test_util.hpp"

using namespace telar;
using namespace telar::ops;
using namespace telar::ops::testing;

namespace {

BatchNormAttrs bn(std::int64_t channels, float eps, float momentum = 0.1f) {
  BatchNormAttrs a;
  a.channels = channels;
  a.eps = eps;
  a.momentum = momentum;
  return a;
}

// Channel 0 holds {1, 1, 3, 3} (mean 2, biased variance 1, unbiased 4/3), channel 1 holds
// {5, 9, 11, 15} (mean 10, variance 13, unbiased 52/3). With eps = 3 the standard deviations
// are exactly 2 and 4.
Tensor two_channel_input() { return f32({1, 1, 5, 9, 3, 3, 11, 15}, {2, 2, 1, 2}); }

}  // namespace

TEST(OpsBatchNorm, TrainForwardStatisticsAndRunningUpdateByHand) {
  const BatchNormAttrs a = bn(2, 3.0f);
  Tensor x = two_channel_input();
  Tensor gamma = f32({2, 1}, {2}), beta = f32({1, 0}, {2});
  Tensor running_mean = f32({0, 0}, {2}), running_var = f32({1, 1}, {2});
  Tensor y(x.shape()), mean({2}), inv_std({2});
  batchnorm_forward_train(a, x, gamma, beta, running_mean, running_var, y, mean, inv_std);
  // Channel 0: 2 * (x - 2) / 2 + 1; channel 1: (x - 10) / 4.
  expect_values(y, {0, 0, -1.25f, -0.25f, 2, 2, 0.25f, 1.25f});
  expect_values(mean, {2, 10});
  expect_values(inv_std, {0.5f, 0.25f});
  // running = 0.9 running + 0.1 batch, with the unbiased variance.
  expect_values(running_mean, {0.2f, 1.0f});
  expect_values(running_var, {0.9f + 0.4f / 3, 0.9f + 5.2f / 3});
}

TEST(OpsBatchNorm, EvalUsesRunningStatistics) {
  const BatchNormAttrs a = bn(2, 3.0f);
  Tensor x = two_channel_input();
  Tensor gamma = f32({2, 1}, {2}), beta = f32({1, 0}, {2});
  // The batch's own statistics as running statistics reproduce the training output.
  Tensor running_mean = f32({2, 10}, {2}), running_var = f32({1, 13}, {2});
  Tensor y(x.shape());
  batchnorm_forward_eval(a, x, gamma, beta, running_mean, running_var, y);
  expect_values(y, {0, 0, -1.25f, -0.25f, 2, 2, 0.25f, 1.25f});
  // Other running statistics: channel 0 (x - 0) / sqrt(1 + 3) * 2 + 1 = x + 1.
  Tensor zero_mean = f32({0, 10}, {2});
  batchnorm_forward_eval(a, x, gamma, beta, zero_mean, running_var, y);
  expect_values(y, {2, 2, -1.25f, -0.25f, 4, 4, 0.25f, 1.25f});
}

TEST(OpsBatchNorm, GradientsMatchFiniteDifferences) {
  Rng rng(51);
  const BatchNormAttrs a = bn(3, 1e-5f);
  Tensor x = uniform({3, 3, 2, 2}, rng, -2.0f, 2.0f);
  Tensor gamma = uniform({3}, rng, 0.5f, 1.5f), beta = uniform({3}, rng);
  Tensor rm({3}), rv({3});
  Tensor y(x.shape()), mean({3}), inv_std({3});
  Tensor r = uniform(x.shape(), rng);
  auto objective = [&] {
    batchnorm_forward_train(a, x, gamma, beta, rm, rv, y, mean, inv_std);
    return project(y, r);
  };
  objective();
  Tensor dx(x.shape()), dgamma({3}), dbeta({3});
  batchnorm_backward(a, x, gamma, mean, inv_std, r, &dx, &dgamma, &dbeta);
  expect_gradient("dx", x, dx, objective, 1e-3f);
  expect_gradient("dgamma", gamma, dgamma, objective, 1e-3f);
  expect_gradient("dbeta", beta, dbeta, objective, 1e-3f);
}

TEST(OpsBatchNorm, UniformGradientCancelsThroughTheMean) {
  // y is invariant to shifting a channel's input, so a gradient constant per channel gives
  // dx = 0, dbeta = the sum, dgamma = sum of xhat = 0.
  Rng rng(52);
  const BatchNormAttrs a = bn(2, 1e-5f);
  Tensor x = uniform({4, 2, 3, 3}, rng);
  Tensor gamma = f32({1.5f, -0.5f}, {2}), beta({2}), rm({2}), rv({2});
  Tensor y(x.shape()), mean({2}), inv_std({2});
  batchnorm_forward_train(a, x, gamma, beta, rm, rv, y, mean, inv_std);
  Tensor dy(x.shape());
  for (std::int64_t n = 0; n < 4; ++n)
    for (std::int64_t i = 0; i < 18; ++i) dy.f32()[n * 18 + i] = i < 9 ? 1.0f : -2.0f;
  Tensor dx(x.shape()), dgamma({2}), dbeta({2});
  batchnorm_backward(a, x, gamma, mean, inv_std, dy, &dx, &dgamma, &dbeta);
  for (float v : dx.span<float>()) EXPECT_NEAR(v, 0.0f, 1e-5f);
  expect_values(dbeta, {36, -72});
  EXPECT_NEAR(dgamma.f32()[0], 0.0f, 1e-4f);
  EXPECT_NEAR(dgamma.f32()[1], 0.0f, 1e-4f);
}

TEST(OpsBatchNorm, AccurateForLargeMeanAndBatch) {
  // A large offset and many values: the statistics must not lose the small spread.
  Rng rng(53);
  const BatchNormAttrs a = bn(2, 1e-5f);
  Tensor x = uniform({32, 2, 16, 16}, rng, 999.0f, 1001.0f);
  Tensor gamma = f32({1, 1}, {2}), beta({2}), rm({2}), rv({2});
  Tensor y(x.shape()), mean({2}), inv_std({2});
  batchnorm_forward_train(a, x, gamma, beta, rm, rv, y, mean, inv_std);
  const std::int64_t plane = 256;
  for (std::int64_t c = 0; c < 2; ++c) {
    double sum = 0.0, sq = 0.0, count = 32.0 * plane;
    for (std::int64_t n = 0; n < 32; ++n)
      for (std::int64_t p = 0; p < plane; ++p) sum += x.f32()[(n * 2 + c) * plane + p];
    const double m = sum / count;
    for (std::int64_t n = 0; n < 32; ++n)
      for (std::int64_t p = 0; p < plane; ++p) {
        const double d = x.f32()[(n * 2 + c) * plane + p] - m;
        sq += d * d;
      }
    const double var = sq / count;
    EXPECT_NEAR(mean.f32()[c], m, 1e-4);
    EXPECT_NEAR(inv_std.f32()[c], 1.0 / std::sqrt(var + 1e-5), 1e-5);
    EXPECT_NEAR(rv.f32()[c], 0.1 * sq / (count - 1), 1e-6);  // from a zero running variance
    for (std::int64_t n = 0; n < 32; n += 5) {
      const std::int64_t i = (n * 2 + c) * plane + n;
      EXPECT_NEAR(y.f32()[i], (x.f32()[i] - m) / std::sqrt(var + 1e-5), 2e-4);
    }
  }
}

TEST(OpsBatchNorm, SingleValuePerChannelIsAnErrorInTraining) {
  const BatchNormAttrs a = bn(2, 1e-5f);
  Tensor x({1, 2, 1, 1}), gamma({2}), beta({2}), rm({2}), rv({2}), y(x.shape()), m({2}), s({2});
  try {
    batchnorm_forward_train(a, x, gamma, beta, rm, rv, y, m, s);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("more than one value per channel"), std::string::npos)
        << e.what();
  }
}
