#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "ops/kernels.hpp"
#include "test_util.hpp"

using namespace telar;
using namespace telar::ops;
using namespace telar::ops::testing;

TEST(OpsCrossEntropy, ByHand) {
  // Row 0: softmax (1/8, 2/8, 5/8), label 2 -> -log(5/8); row 1 same logits, label 0 -> log 8.
  const float l2 = std::log(2.0f), l5 = std::log(5.0f);
  Tensor logits = f32({0, l2, l5, 0, l2, l5}, {2, 3});
  Tensor labels = i64({2, 0});
  Tensor d({2, 3});
  const float loss = cross_entropy_with_logits(logits, labels, &d, 3.0f);
  EXPECT_NEAR(loss, (std::log(1.6) + std::log(8.0)) / 2, 1e-6);
  // d = scale / B * (softmax - onehot) = 1.5 * ...
  expect_values(d, {1.5f * 0.125f, 1.5f * 0.25f, 1.5f * (0.625f - 1), 1.5f * (0.125f - 1),
                    1.5f * 0.25f, 1.5f * 0.625f});
}

TEST(OpsCrossEntropy, UniformLogitsGiveLogC) {
  for (float value : {0.0f, 3.7f, -1e4f, 1e4f}) {
    Tensor logits({4, 10});
    logits.fill(value);
    Tensor labels = i64({0, 3, 9, 5});
    EXPECT_NEAR(cross_entropy_with_logits(logits, labels, nullptr), std::log(10.0), 1e-6)
        << value;
  }
}

TEST(OpsCrossEntropy, StableForLargeLogits) {
  Tensor logits = f32({1000, 0, -1000, 1000}, {2, 2});
  Tensor labels = i64({1, 1});
  Tensor d({2, 2});
  // Row 0: log(e^1000 + 1) - 0 = 1000; row 1: log(e^-1000 + e^1000) - 1000 = 0.
  EXPECT_NEAR(cross_entropy_with_logits(logits, labels, &d), 500.0f, 1e-3f);
  expect_values(d, {0.5f, -0.5f, 0, 0});
}

TEST(OpsCrossEntropy, GradientMatchesFiniteDifferences) {
  Rng rng(131);
  Tensor logits = uniform({4, 5}, rng, -2, 2), labels = i64({0, 4, 2, 2}), d({4, 5});
  cross_entropy_with_logits(logits, labels, &d, 0.5f);
  expect_gradient("dlogits", logits, d,
                  [&] { return 0.5 * cross_entropy_with_logits(logits, labels, nullptr); });
}

TEST(OpsCrossEntropy, LabelOutOfRangeIsAnError) {
  Tensor logits({2, 3}), d({2, 3});
  for (std::int64_t bad : {3, -1}) {
    try {
      cross_entropy_with_logits(logits, i64({0, bad}), &d);
      FAIL() << "expected an error for label " << bad;
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(fmt::format("label {} of sample 1", bad)), std::string::npos) << msg;
      EXPECT_NE(msg.find("3 classes"), std::string::npos) << msg;
    }
  }
}

TEST(OpsBce, EqualsNaiveFormulaOnModerateInputs) {
  Rng rng(141);
  Tensor x = uniform({6, 1}, rng, -4, 4), t = uniform({6, 1}, rng, 0, 1);
  double naive = 0.0;
  for (int i = 0; i < 6; ++i) {
    const double s = 1.0 / (1.0 + std::exp(-static_cast<double>(x.f32()[i])));
    naive -= t.f32()[i] * std::log(s) + (1 - t.f32()[i]) * std::log(1 - s);
  }
  EXPECT_NEAR(bce_with_logits(x, t, nullptr), naive / 6, 1e-6);
}

TEST(OpsBce, ByHandAndStableForLargeLogits) {
  // x = 0: log 2 whatever the target; x = ±100 against the wrong target: 100; gradient
  // (sigmoid(x) - t) / N.
  Tensor x = f32({0, 100, -100, 100}, {4, 1}), t = f32({1, 0, 1, 1}, {4, 1}), d({4, 1});
  const float loss = bce_with_logits(x, t, &d);
  EXPECT_NEAR(loss, (std::log(2.0) + 100 + 100 + 0) / 4, 1e-4);
  expect_values(d, {-0.125f, 0.25f, -0.25f, 0});
}

TEST(OpsBce, GradientMatchesFiniteDifferences) {
  Rng rng(142);
  Tensor x = uniform({5, 1}, rng, -3, 3), t = uniform({5, 1}, rng, 0, 1), d({5, 1});
  bce_with_logits(x, t, &d, 2.0f);
  expect_gradient("dlogits", x, d, [&] { return 2.0 * bce_with_logits(x, t, nullptr); });
}

TEST(OpsMse, ByHand) {
  Tensor p = f32({1, 2, 3, 4}, {2, 2}), t = f32({0, 2, 5, 4}, {2, 2}), d({2, 2});
  EXPECT_NEAR(mse(p, t, &d), (1 + 4) / 4.0, 1e-7);
  expect_values(d, {0.5f, 0, -1, 0});
  // Labels as one-hot rows: targets (0, 1) and (1, 0); gradient 2 * scale / 4 * difference.
  Tensor q = f32({0.2f, 0.8f, 0.6f, 0.4f}, {2, 2});
  EXPECT_NEAR(mse(q, i64({1, 0}), &d, 2.0f), (0.04 + 0.04 + 0.16 + 0.16) / 4, 1e-6);
  expect_values(d, {0.2f, -0.2f, -0.4f, 0.4f});
}

TEST(OpsMse, GradientsMatchFiniteDifferences) {
  Rng rng(151);
  Tensor p = uniform({3, 4}, rng), t = uniform({3, 4}, rng), d({3, 4});
  mse(p, t, &d);
  expect_gradient("dprediction", p, d, [&] { return double{mse(p, t, nullptr)}; });
  Tensor labels = i64({3, 0, 1});
  mse(p, labels, &d, 4.0f);
  expect_gradient("dprediction (labels)", p, d, [&] { return 4.0 * mse(p, labels, nullptr); });
}

TEST(OpsMse, LabelOutOfRangeIsAnError) {
  Tensor p({2, 3});
  EXPECT_THROW(mse(p, i64({0, 3}), nullptr), Error);
}
