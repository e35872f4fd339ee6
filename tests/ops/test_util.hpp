#pragma once
// Helpers for the reference-kernel tests: tensors from literals and seeds, and a central
// finite-difference check of analytic gradients.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <numeric>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "core/tensor.hpp"

namespace telar::ops::testing {

inline Tensor f32(std::initializer_list<float> values, Shape shape) {
  return Tensor::from(std::vector<float>(values), std::move(shape));
}

inline Tensor i64(std::vector<std::int64_t> values) {
  Tensor t({static_cast<std::int64_t>(values.size())}, DType::I64);
  std::copy(values.begin(), values.end(), t.data<std::int64_t>());
  return t;
}

inline Tensor uniform(Shape shape, Rng& rng, float lo = -1.0f, float hi = 1.0f) {
  Tensor t(std::move(shape));
  for (float& v : t.span<float>()) v = rng.uniform(lo, hi);
  return t;
}

// Values bounded away from zero (|v| in [lo, hi], random sign): no ReLU kink within the step.
inline Tensor away_from_zero(Shape shape, Rng& rng, float lo = 0.1f, float hi = 1.0f) {
  Tensor t(std::move(shape));
  for (float& v : t.span<float>()) v = rng.uniform(lo, hi) * (rng.uniform() < 0.5 ? -1.0f : 1.0f);
  return t;
}

// Distinct values spaced `gap` apart in random order: no ties anywhere (max pooling).
inline Tensor distinct(Shape shape, Rng& rng, float gap = 0.05f) {
  Tensor t(std::move(shape));
  std::vector<std::int64_t> order(static_cast<std::size_t>(t.numel()));
  std::iota(order.begin(), order.end(), 0);
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.f32()[i] = (static_cast<float>(order[i]) - static_cast<float>(t.numel()) / 2) * gap;
  return t;
}

// sum_i r_i y_i in double: a scalar objective whose gradient with respect to y is r.
inline double project(const Tensor& y, const Tensor& r) {
  double s = 0.0;
  for (std::int64_t i = 0; i < y.numel(); ++i) s += static_cast<double>(y.f32()[i]) * r.f32()[i];
  return s;
}

inline void expect_values(const Tensor& actual, std::initializer_list<float> expected,
                          float tol = 1e-5f) {
  ASSERT_EQ(actual.numel(), static_cast<std::int64_t>(expected.size()));
  std::int64_t i = 0;
  for (float e : expected) {
    EXPECT_NEAR(actual.f32()[i], e, tol * std::max(1.0f, std::fabs(e))) << "element " << i;
    ++i;
  }
}

inline void expect_close(const Tensor& actual, const Tensor& expected, float tol = 1e-5f) {
  ASSERT_EQ(actual.shape(), expected.shape());
  for (std::int64_t i = 0; i < actual.numel(); ++i)
    EXPECT_NEAR(actual.f32()[i], expected.f32()[i], tol * std::max(1.0f, std::fabs(expected.f32()[i])))
        << "element " << i;
}

// Checks `analytic` (d objective / d input) against central differences of `objective`, which
// must recompute the forward from `input` each call. Every element is checked; the step is
// taken in float and the actual difference of the perturbed values is used as the divisor.
inline void expect_gradient(const std::string& what, Tensor& input, const Tensor& analytic,
                            const std::function<double()>& objective, float step = 1e-2f,
                            double rtol = 1e-2) {
  ASSERT_EQ(input.shape(), analytic.shape()) << what;
  std::vector<double> numeric(static_cast<std::size_t>(input.numel()));
  double largest = 0.0;
  for (std::int64_t i = 0; i < input.numel(); ++i) {
    float& v = input.f32()[i];
    const float saved = v;
    const float up = saved + step, down = saved - step;
    v = up;
    const double f_up = objective();
    v = down;
    const double f_down = objective();
    v = saved;
    numeric[i] = (f_up - f_down) / (static_cast<double>(up) - static_cast<double>(down));
    largest = std::max(largest, std::fabs(numeric[i]));
  }
  // Relative per element, with an absolute floor tied to the gradient's overall magnitude:
  // float rounding in the forward divided by the step is the noise of the numeric derivative.
  const double floor = 2e-3 * std::max(largest, 1e-2);
  int failures = 0;
  for (std::int64_t i = 0; i < input.numel(); ++i) {
    const double a = analytic.f32()[i], n = numeric[i];
    if (std::fabs(a - n) > rtol * std::max(std::fabs(a), std::fabs(n)) + floor && failures++ < 8)
      ADD_FAILURE() << what << ": element " << i << " analytic " << a << " numeric " << n;
  }
  EXPECT_EQ(failures, 0) << what << ": " << failures << " of " << input.numel()
                         << " gradient elements disagree";
  // A check against an all-zero gradient would pass vacuously for a kernel that writes zeros.
  EXPECT_GT(largest, 0.0) << what << ": the objective does not depend on this input";
}

}  // namespace telar::ops::testing
