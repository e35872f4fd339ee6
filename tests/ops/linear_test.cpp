#include <gtest/gtest.h>

#include "ops/kernels.hpp"
#include "test_util.hpp"

using namespace telar;
using namespace telar::ops;
using namespace telar::ops::testing;

TEST(OpsLinear, ForwardByHand) {
  Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor w = f32({1, 0, -1, 0.5f, 0.5f, 0.5f}, {2, 3});
  Tensor b = f32({0.1f, -0.2f}, {2});
  Tensor y({2, 2});
  linear_forward(x, w, &b, y);
  // Row 0: 1 - 3 + 0.1, 0.5 * 6 - 0.2; row 1: 4 - 6 + 0.1, 0.5 * 15 - 0.2.
  expect_values(y, {-1.9f, 2.8f, -1.9f, 7.3f});
  linear_forward(x, w, nullptr, y);
  expect_values(y, {-2.0f, 3.0f, -2.0f, 7.5f});
}

TEST(OpsLinear, BackwardByHand) {
  Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor w = f32({1, 0, -1, 0.5f, 0.5f, 0.5f}, {2, 3});
  Tensor dy = f32({1, 0, 0, 2}, {2, 2});
  Tensor dx({2, 3}), dw({2, 3}), db({2});
  dx.fill(99.0f);  // backward overwrites, never accumulates
  linear_backward(x, w, dy, &dx, &dw, &db);
  expect_values(dx, {1, 0, -1, 1, 1, 1});
  expect_values(dw, {1, 2, 3, 8, 10, 12});
  expect_values(db, {1, 2});
  Tensor dw_only({2, 3});
  linear_backward(x, w, dy, nullptr, &dw_only, nullptr);
  expect_close(dw_only, dw);
}

TEST(OpsLinear, GradientsMatchFiniteDifferences) {
  Rng rng(11);
  Tensor x = uniform({3, 5}, rng), w = uniform({4, 5}, rng), b = uniform({4}, rng);
  Tensor r = uniform({3, 4}, rng);
  Tensor y({3, 4});
  auto objective = [&] {
    linear_forward(x, w, &b, y);
    return project(y, r);
  };
  Tensor dx({3, 5}), dw({4, 5}), db({4});
  linear_backward(x, w, r, &dx, &dw, &db);
  expect_gradient("dx", x, dx, objective);
  expect_gradient("dw", w, dw, objective);
  expect_gradient("db", b, db, objective);
}

TEST(OpsLinear, LargeEnoughToRunThreadedAgreesWithSmallDefinition) {
  // Crosses the kernels' parallel thresholds; compared with the definition in double.
  Rng rng(12);
  const std::int64_t batch = 64, in = 96, out = 48;
  Tensor x = uniform({batch, in}, rng), w = uniform({out, in}, rng), b = uniform({out}, rng);
  Tensor y({batch, out});
  linear_forward(x, w, &b, y);
  for (std::int64_t n = 0; n < batch; n += 7)
    for (std::int64_t o = 0; o < out; o += 5) {
      double acc = b.f32()[o];
      for (std::int64_t i = 0; i < in; ++i)
        acc += static_cast<double>(x.f32()[n * in + i]) * w.f32()[o * in + i];
      EXPECT_NEAR(y.f32()[n * out + o], acc, 1e-4);
    }
}

// Over the last axis of [B, L, in] (a transformer's tokens): each of the B * L rows on its own,
// against the definition in double; gradients against finite differences.
TEST(OpsLinear, OverRowsEachRowOnItsOwn) {
  Rng rng(13);
  const std::int64_t batch = 2, rows = 3, in = 4, out = 5;
  Tensor x = uniform({batch, rows, in}, rng), w = uniform({out, in}, rng), b = uniform({out}, rng);
  Tensor y({batch, rows, out});
  linear_forward(x, w, &b, y);
  for (std::int64_t r = 0; r < batch * rows; ++r)
    for (std::int64_t o = 0; o < out; ++o) {
      double acc = b.f32()[o];
      for (std::int64_t i = 0; i < in; ++i)
        acc += static_cast<double>(x.f32()[r * in + i]) * w.f32()[o * in + i];
      EXPECT_NEAR(y.f32()[r * out + o], acc, 1e-5) << r << " " << o;
    }
  Tensor probe = uniform({batch, rows, out}, rng);
  auto objective = [&] {
    linear_forward(x, w, &b, y);
    return project(y, probe);
  };
  Tensor dx({batch, rows, in}), dw({out, in}), db({out});
  linear_backward(x, w, probe, &dx, &dw, &db);
  expect_gradient("dx", x, dx, objective);
  expect_gradient("dw", w, dw, objective);
  expect_gradient("db", b, db, objective);
}
