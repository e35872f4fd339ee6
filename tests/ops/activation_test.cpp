#include <gtest/gtest.h>

#include <cmath>

#include "ops/kernels.hpp"
#include "test_util.hpp"

using namespace telar;
using namespace telar::ops;
using namespace telar::ops::testing;

namespace {

Tensor forward(Activation kind, const Tensor& x, ActivationParams p = {}) {
  Tensor y(x.shape());
  activation_forward(kind, x, y, p);
  return y;
}

void check_gradient(Activation kind, Tensor x, const char* what, ActivationParams p = {}) {
  Rng rng(61);
  Tensor y(x.shape()), r = uniform(x.shape(), rng);
  auto objective = [&] {
    activation_forward(kind, x, y, p);
    return project(y, r);
  };
  objective();
  Tensor dx(x.shape());
  activation_backward(kind, x, y, r, dx, p);
  expect_gradient(what, x, dx, objective);
}

// PyTorch's hardsigmoid as ONNX writes it: alpha 1/6, beta 1/2.
constexpr ActivationParams kTorchHardSigmoid{1.0f / 6.0f, 0.5f};

}  // namespace

TEST(OpsActivation, ForwardByHand) {
  Tensor x = f32({-2, -0.5f, 0, 0.5f, 3, 7}, {2, 3});
  expect_values(forward(Activation::ReLU, x), {0, 0, 0, 0.5f, 3, 7});
  expect_values(forward(Activation::ReLU6, x), {0, 0, 0, 0.5f, 3, 6});
  // sigmoid(±ln 3) = 3/4, 1/4; tanh(ln 2) = (2 - 1/2) / (2 + 1/2) = 0.6.
  const float ln3 = std::log(3.0f), ln2 = std::log(2.0f);
  Tensor s = f32({0, ln3, -ln3, 100, -100, -1000}, {6});
  expect_values(forward(Activation::Sigmoid, s), {0.5f, 0.75f, 0.25f, 1, 0, 0});
  Tensor t = f32({0, ln2, -ln2, 50}, {4});
  expect_values(forward(Activation::Tanh, t), {0, 0.6f, -0.6f, 1});
}

TEST(OpsActivation, ParametrisedForwardByHand) {
  Tensor x = f32({-6, -3, -1.5f, 0, 1.5f, 3, 6}, {7});
  expect_values(forward(Activation::LeakyReLU, x, {0.1f, 0}), {-0.6f, -0.3f, -0.15f, 0, 1.5f, 3, 6});
  // clamp(x / 6 + 1/2, 0, 1)
  expect_values(forward(Activation::HardSigmoid, x, kTorchHardSigmoid),
                {0, 0, 0.25f, 0.5f, 0.75f, 1, 1});
  // x * clamp(x + 3, 0, 6) / 6: -1.5 * 1.5 / 6 = -0.375, 1.5 * 4.5 / 6 = 1.125.
  expect_values(forward(Activation::HardSwish, x), {0, 0, -0.375f, 0, 1.125f, 3, 6});
}

TEST(OpsActivation, ParametrisedBackwardByHand) {
  Tensor x = f32({-4, -1.5f, 0, 1.5f, 4}, {5});
  Tensor dy = f32({1, 1, 1, 1, 1}, {5}), dx({5});
  activation_backward(Activation::LeakyReLU, x, Tensor(), dy, dx, {0.2f, 0});
  expect_values(dx, {0.2f, 0.2f, 0.2f, 1, 1});  // PyTorch: slope 1 only where x > 0
  activation_backward(Activation::HardSigmoid, x, Tensor(), dy, dx, kTorchHardSigmoid);
  expect_values(dx, {0, 1.0f / 6, 1.0f / 6, 1.0f / 6, 0});
  activation_backward(Activation::HardSwish, x, Tensor(), dy, dx);
  expect_values(dx, {0, 0, 0.5f, 1, 1});  // x / 3 + 1/2 between -3 and 3
}

// SiLU = x sigmoid(x): sigmoid(±ln 3) = 3/4, 1/4 gives ±ln 3 * 3/4 and -ln 3 * 1/4; its slope
// s (1 + x (1 - s)) is 1/2 at 0 and 3/4 (1 + ln 3 / 4) at ln 3.
TEST(OpsActivation, SiLUByHand) {
  const float ln3 = std::log(3.0f);
  expect_values(forward(Activation::SiLU, f32({0, ln3, -ln3, 100, -100}, {5})),
                {0, 0.75f * ln3, -0.25f * ln3, 100, 0});
  Tensor dy = f32({1, 2}, {2}), dx({2});
  activation_backward(Activation::SiLU, f32({0, ln3}, {2}), Tensor(), dy, dx);
  expect_values(dx, {0.5f, 2 * 0.75f * (1 + ln3 / 4)});
}

// GELU = x Phi(x) (Phi the standard normal cdf): Phi(1) = 0.8413447461, so GELU(1) = 0.8413447,
// GELU(-1) = -(1 - 0.8413447) = -0.1586553; its slope Phi(x) + x phi(x) is 1/2 at 0 and
// 0.8413447 + 0.2419707 (phi(1) = exp(-1/2) / sqrt(2 pi)) at 1.
TEST(OpsActivation, GELUByHand) {
  expect_values(forward(Activation::GELU, f32({0, 1, -1, 10, -10}, {5})),
                {0, 0.8413447f, -0.1586553f, 10, 0});
  Tensor dy = f32({1, 2}, {2}), dx({2});
  activation_backward(Activation::GELU, f32({0, 1}, {2}), Tensor(), dy, dx);
  expect_values(dx, {0.5f, 2 * (0.8413447f + 0.2419707f)});
}

TEST(OpsActivation, SqrtAndErfByHand) {
  expect_values(forward(Activation::Sqrt, f32({0, 0.25f, 4, 9}, {4})), {0, 0.5f, 2, 3});
  // erf(0) = 0, erf(-x) = -erf(x), erf(1) = 0.8427007929.
  expect_values(forward(Activation::Erf, f32({0, 1, -1}, {3})), {0, 0.8427008f, -0.8427008f});
  Tensor dy = f32({1, 1}, {2}), dx({2});
  activation_backward(Activation::Sqrt, Tensor(), f32({0.5f, 2}, {2}), dy, dx);
  expect_values(dx, {1, 0.25f});  // 1 / (2 y)
  activation_backward(Activation::Erf, f32({0, 1}, {2}), Tensor(), dy, dx);
  expect_values(dx, {1.1283792f, 1.1283792f * 0.36787944f});  // 2 / sqrt(pi) exp(-x^2)
}

TEST(OpsActivation, NaNPropagates) {
  Tensor x = f32({std::nanf("")}, {1});
  for (Activation k : {Activation::ReLU, Activation::ReLU6, Activation::Sigmoid, Activation::Tanh})
    EXPECT_TRUE(std::isnan(forward(k, x).f32()[0])) << static_cast<int>(k);
}

TEST(OpsActivation, BackwardAtTheKinksFollowsPyTorch) {
  // ReLU passes the gradient only where x > 0; ReLU6 only where 0 < x < 6.
  Tensor x = f32({-1, 0, 2, 6, 8}, {5});
  Tensor dy = f32({1, 2, 3, 4, 5}, {5});
  Tensor dx({5});
  activation_backward(Activation::ReLU, x, forward(Activation::ReLU, x), dy, dx);
  expect_values(dx, {0, 0, 3, 4, 5});
  activation_backward(Activation::ReLU6, x, forward(Activation::ReLU6, x), dy, dx);
  expect_values(dx, {0, 0, 3, 0, 0});
  // Sigmoid and tanh read their output: y (1 - y) and 1 - y^2.
  Tensor y = f32({0.5f, 0.25f, 0.9f, 0, 0, 0}, {6});
  Tensor dy6 = f32({1, 2, 3, 4, 5, 6}, {6});
  Tensor dx6({6});
  activation_backward(Activation::Sigmoid, Tensor(), y, dy6, dx6);
  expect_values(dx6, {0.25f, 2 * 0.1875f, 3 * 0.09f, 0, 0, 0});
  activation_backward(Activation::Tanh, Tensor(), y, dy6, dx6);
  expect_values(dx6, {0.75f, 2 * 0.9375f, 3 * 0.19f, 4, 5, 6});
}

TEST(OpsActivation, GradientsMatchFiniteDifferences) {
  Rng rng(62);
  check_gradient(Activation::ReLU, away_from_zero({3, 7}, rng), "relu");
  // ReLU6: values around both kinks, none within 0.1 of them.
  Tensor x6 = away_from_zero({3, 7}, rng);
  for (std::int64_t i = 0; i < x6.numel(); i += 3) x6.f32()[i] += 6.0f;
  check_gradient(Activation::ReLU6, x6, "relu6");
  check_gradient(Activation::Sigmoid, uniform({3, 7}, rng, -4, 4), "sigmoid");
  check_gradient(Activation::Tanh, uniform({3, 7}, rng, -2, 2), "tanh");
  check_gradient(Activation::LeakyReLU, away_from_zero({3, 7}, rng), "leaky relu", {0.01f, 0});
  // HardSigmoid's kinks are at -3 and 3, HardSwish's at -3 and 3 too: stay 0.1 away.
  Tensor xh = away_from_zero({3, 7}, rng, 0.1f, 2.8f);
  for (std::int64_t i = 0; i < xh.numel(); i += 4) xh.f32()[i] *= 2.0f;
  for (float& v : xh.span<float>())
    if (std::fabs(std::fabs(v) - 3.0f) < 0.1f) v *= 0.9f;
  check_gradient(Activation::HardSigmoid, xh, "hard sigmoid", kTorchHardSigmoid);
  check_gradient(Activation::HardSwish, xh, "hard swish");
  check_gradient(Activation::SiLU, uniform({3, 7}, rng, -4, 4), "silu");
  check_gradient(Activation::GELU, uniform({3, 7}, rng, -4, 4), "gelu");
  check_gradient(Activation::Sqrt, uniform({3, 7}, rng, 0.5f, 3.0f), "sqrt");
  check_gradient(Activation::Erf, uniform({3, 7}, rng, -2, 2), "erf");
  // Pow: integer exponents over both signs (away from 0 for the negative one), fractional
  // ones over positive x.
  check_gradient(Activation::Pow, uniform({3, 7}, rng, -2, 2), "cube", {3.0f, 0});
  check_gradient(Activation::Pow, away_from_zero({3, 7}, rng, 0.5f, 2.0f), "inverse", {-1.0f, 0});
  check_gradient(Activation::Pow, uniform({3, 7}, rng, 0.5f, 3.0f), "x^1.5", {1.5f, 0});
  check_gradient(Activation::Pow, uniform({3, 7}, rng, 0.5f, 3.0f), "x^-0.5", {-0.5f, 0});
}

TEST(OpsActivation, PowByHand) {
  const Tensor x = f32({2, -3, 0.25f, 4}, {4});
  Tensor y({4});
  activation_forward(Activation::Pow, x, y, {3.0f, 0});
  expect_values(y, {8, -27, 0.015625f, 64});
  Tensor y2({2});
  activation_forward(Activation::Pow, f32({4, 0.25f}, {2}), y2, {-0.5f, 0});
  expect_values(y2, {0.5f, 2});
  // d/dx x^3 = 3 x^2; x^0 has no gradient (PyTorch's, even at 0).
  Tensor dy = f32({1, 1, 1, 1}, {4}), dx({4});
  activation_backward(Activation::Pow, x, Tensor(), dy, dx, {3.0f, 0});
  expect_values(dx, {12, 27, 0.1875f, 48});
  activation_backward(Activation::Pow, f32({0, 2, -1, 5}, {4}), Tensor(), dy, dx, {0.0f, 0});
  expect_values(dx, {0, 0, 0, 0});
}

TEST(OpsActivation, LargeTensorsUseEveryElement) {
  // Crosses the parallel threshold: every element computed, none skipped by the partition.
  Rng rng(63);
  Tensor x = uniform({300, 301}, rng, -8, 8);
  Tensor y = forward(Activation::ReLU6, x);
  for (std::int64_t i = 0; i < x.numel(); ++i)
    ASSERT_EQ(y.f32()[i], std::min(std::max(x.f32()[i], 0.0f), 6.0f)) << i;
  Tensor s = forward(Activation::Sigmoid, x);
  for (std::int64_t i = 0; i < x.numel(); i += 97)
    ASSERT_NEAR(s.f32()[i], 1.0 / (1.0 + std::exp(-static_cast<double>(x.f32()[i]))), 1e-6) << i;
}
