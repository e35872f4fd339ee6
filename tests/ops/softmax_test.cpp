#include <gtest/gtest.h>

#include <cmath>

#include "ops/kernels.hpp"
#include "test_util.hpp"

using namespace telar;
using namespace telar::ops;
using namespace telar::ops::testing;

TEST(OpsSoftmax, ForwardByHand) {
  // Row 0: logits ln(1), ln(2), ln(5) give 1/8, 2/8, 5/8. Row 1: equal logits, uniform even
  // when they are huge (the maximum is subtracted first).
  Tensor x = f32({0, std::log(2.0f), std::log(5.0f), 1000, 1000, 1000}, {2, 3});
  Tensor y(x.shape());
  softmax_forward(x, y);
  expect_values(y, {0.125f, 0.25f, 0.625f, 1 / 3.0f, 1 / 3.0f, 1 / 3.0f});
  // A row of -1000 and 0: exp(-1000) underflows to exactly zero, no NaN.
  Tensor z = f32({-1000, 0}, {1, 2});
  Tensor yz(z.shape());
  softmax_forward(z, yz);
  expect_values(yz, {0, 1});
}

TEST(OpsSoftmax, BackwardByHand) {
  // dx_i = y_i (dy_i - sum_j dy_j y_j); with y = (1/8, 2/8, 5/8), dy = (1, 0, 0):
  // sum = 1/8, dx = (1/8 * 7/8, -2/8 * 1/8, -5/8 * 1/8).
  Tensor y = f32({0.125f, 0.25f, 0.625f}, {1, 3});
  Tensor dy = f32({1, 0, 0}, {1, 3});
  Tensor dx({1, 3});
  softmax_backward(y, dy, dx);
  expect_values(dx, {7 / 64.0f, -2 / 64.0f, -5 / 64.0f});
}

TEST(OpsSoftmax, GradientMatchesFiniteDifferences) {
  Rng rng(71);
  Tensor x = uniform({4, 6}, rng, -3, 3), r = uniform({4, 6}, rng), y({4, 6});
  auto objective = [&] {
    softmax_forward(x, y);
    return project(y, r);
  };
  objective();
  Tensor dx({4, 6});
  softmax_backward(y, r, dx);
  expect_gradient("dx", x, dx, objective);
}

TEST(OpsSoftmax, EachRowOfTheLastAxisOnItsOwn) {
  // [1, 2, 3]: two rows of three (the last axis), each normalised alone; the first row's
  // logits ln 1, ln 2, ln 5 give 1/8, 2/8, 5/8 whatever the second holds.
  Tensor x = f32({0, std::log(2.0f), std::log(5.0f), 7, 7, 7}, {1, 2, 3});
  Tensor y(x.shape());
  softmax_forward(x, y);
  expect_values(y, {0.125f, 0.25f, 0.625f, 1 / 3.0f, 1 / 3.0f, 1 / 3.0f});
  Rng rng(73);
  Tensor x4 = uniform({2, 3, 2, 5}, rng, -3, 3), r = uniform({2, 3, 2, 5}, rng), y4(x4.shape());
  auto objective = [&] {
    softmax_forward(x4, y4);
    return project(y4, r);
  };
  objective();
  Tensor dx(x4.shape());
  softmax_backward(y4, r, dx);
  expect_gradient("dx", x4, dx, objective);
}
