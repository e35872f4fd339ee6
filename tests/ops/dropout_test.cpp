#include <gtest/gtest.h>
#include <omp.h>

#include "core/error.hpp"
#include "ops/kernels.hpp"
#include "test_util.hpp"

using namespace telar;
using namespace telar::ops;
using namespace telar::ops::testing;

namespace {

std::vector<std::uint8_t> mask_of(float p, std::uint64_t seed, const Tensor& x, Tensor& y) {
  Rng rng(seed);
  Tensor mask(x.shape(), DType::U8);
  dropout_forward(p, rng, x, y, mask);
  auto m = mask.span<std::uint8_t>();
  return {m.begin(), m.end()};
}

}  // namespace

TEST(OpsDropout, KeptValuesAreScaledAndDroppedAreZero) {
  Rng data(91);
  Tensor x = away_from_zero({50, 40}, data), y(x.shape());
  const float p = 0.25f;
  auto mask = mask_of(p, 7, x, y);
  std::int64_t kept = 0;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    if (mask[i]) {
      ++kept;
      EXPECT_FLOAT_EQ(y.f32()[i], x.f32()[i] / 0.75f);
    } else {
      EXPECT_EQ(y.f32()[i], 0.0f);
    }
  }
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, x.numel());
}

TEST(OpsDropout, KeepsAboutOneMinusPOfTheElements) {
  Tensor x({400, 250}), y(x.shape());
  x.fill(1.0f);
  for (float p : {0.1f, 0.5f, 0.8f}) {
    auto mask = mask_of(p, 3, x, y);
    double kept = 0;
    for (auto m : mask) kept += m;
    // 100000 Bernoulli draws: the standard deviation of the fraction is below 0.0016.
    EXPECT_NEAR(kept / static_cast<double>(mask.size()), 1.0 - p, 0.01) << "p=" << p;
  }
}

TEST(OpsDropout, ZeroProbabilityIsIdentity) {
  Rng data(92);
  Tensor x = uniform({7, 9}, data), y(x.shape());
  auto mask = mask_of(0.0f, 1, x, y);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    EXPECT_EQ(mask[i], 1);
    EXPECT_EQ(y.f32()[i], x.f32()[i]);
  }
}

TEST(OpsDropout, DeterministicGivenTheRngAndIndependentOfThreads) {
  Tensor x({300, 200}), y(x.shape());
  x.fill(1.0f);
  const auto first = mask_of(0.5f, 42, x, y);
  EXPECT_EQ(mask_of(0.5f, 42, x, y), first);
  EXPECT_NE(mask_of(0.5f, 43, x, y), first);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto serial = mask_of(0.5f, 42, x, y);
  omp_set_num_threads(3);
  const auto three = mask_of(0.5f, 42, x, y);
  omp_set_num_threads(threads);
  EXPECT_EQ(serial, first);
  EXPECT_EQ(three, first);
  // Consecutive calls on one Rng draw different masks.
  Rng rng(42);
  Tensor m1(x.shape(), DType::U8), m2(x.shape(), DType::U8);
  dropout_forward(0.5f, rng, x, y, m1);
  dropout_forward(0.5f, rng, x, y, m2);
  EXPECT_FALSE(std::equal(m1.span<std::uint8_t>().begin(), m1.span<std::uint8_t>().end(),
                          m2.span<std::uint8_t>().begin()));
}

TEST(OpsDropout, BackwardByHandAndFiniteDifferences) {
  Tensor mask({4}, DType::U8);
  mask.data<std::uint8_t>()[1] = 1;
  mask.data<std::uint8_t>()[2] = 1;
  Tensor dy = f32({1, 2, 3, 4}, {4}), dx({4});
  dropout_backward(0.5f, mask, dy, dx);
  expect_values(dx, {0, 4, 6, 0});

  Rng data(93);
  Tensor x = uniform({5, 6}, data), y(x.shape()), m(x.shape(), DType::U8);
  Tensor r = uniform(x.shape(), data);
  auto objective = [&] {
    Rng rng(5);  // the same mask every evaluation
    dropout_forward(0.3f, rng, x, y, m);
    return project(y, r);
  };
  objective();
  Tensor g(x.shape());
  dropout_backward(0.3f, m, r, g);
  expect_gradient("dx", x, g, objective);
}

TEST(OpsDropout, ProbabilityOutOfRangeIsAnError) {
  Rng rng(1);
  Tensor x({2}), y({2}), mask({2}, DType::U8);
  EXPECT_THROW(dropout_forward(1.0f, rng, x, y, mask), Error);
  EXPECT_THROW(dropout_forward(-0.1f, rng, x, y, mask), Error);
}
