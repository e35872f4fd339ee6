#include <gtest/gtest.h>

#include "ops/kernels.hpp"
#include "test_util.hpp"

using namespace telar;
using namespace telar::ops;
using namespace telar::ops::testing;

TEST(OpsBinary, SameShapeForwardByHand) {
  Tensor a = f32({1, 2, 3, 4}, {2, 2}), b = f32({10, -2, 0.5f, 8}, {2, 2}), y({2, 2});
  binary_forward(Binary::Add, a, b, y);
  expect_values(y, {11, 0, 3.5f, 12});
  binary_forward(Binary::Sub, a, b, y);
  expect_values(y, {-9, 4, 2.5f, -4});
  binary_forward(Binary::Mul, a, b, y);
  expect_values(y, {10, -4, 1.5f, 32});
  binary_forward(Binary::Div, a, b, y);
  expect_values(y, {0.1f, -1, 6, 0.5f});
}

TEST(OpsBinary, BroadcastsLikeNumPy) {
  // A squeeze-and-excitation scale: [2, 2, 1, 2] by [2, 2, 1, 1].
  Tensor x = f32({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 1, 2}), s = f32({10, 100, -1, 0}, {2, 2, 1, 1});
  Tensor y({2, 2, 1, 2});
  binary_forward(Binary::Mul, x, s, y);
  expect_values(y, {10, 20, 300, 400, -5, -6, 0, 0});
  // A per-channel constant of lower rank ([2, 1, 1] against [B, 2, 1, 2]), on the left.
  Tensor c = f32({1, -1}, {2, 1, 1});
  binary_forward(Binary::Sub, c, x, y);
  expect_values(y, {0, -1, -4, -5, -4, -5, -8, -9});
  // Both stretched: [2, 1] + [1, 3] -> [2, 3].
  Tensor col = f32({1, 2}, {2, 1}), row = f32({10, 20, 30}, {1, 3}), z({2, 3});
  binary_forward(Binary::Add, col, row, z);
  expect_values(z, {11, 21, 31, 12, 22, 32});
}

TEST(OpsBinary, BackwardSumsOverStretchedDimensionsByHand) {
  Tensor col = f32({1, 2}, {2, 1}), row = f32({10, 20, 30}, {1, 3});
  Tensor dy = f32({1, 2, 3, 4, 5, 6}, {2, 3}), dcol({2, 1}), drow({1, 3});
  binary_backward(Binary::Add, col, row, dy, &dcol, &drow);
  expect_values(dcol, {6, 15});
  expect_values(drow, {5, 7, 9});
  binary_backward(Binary::Sub, col, row, dy, &dcol, &drow);
  expect_values(drow, {-5, -7, -9});
  // d(col * row)/d col_i = sum_j dy_ij row_j: 10 + 40 + 90, 40 + 100 + 180.
  binary_backward(Binary::Mul, col, row, dy, &dcol, &drow);
  expect_values(dcol, {140, 320});
  expect_values(drow, {1 + 8, 2 + 10, 3 + 12});
  // Only the gradient asked for is written.
  binary_backward(Binary::Div, col, row, dy, &dcol, nullptr);
  expect_values(dcol, {0.1f + 0.1f + 0.1f, 0.4f + 0.25f + 0.2f});
}

TEST(OpsBinary, GradientsMatchFiniteDifferences) {
  Rng rng(71);
  for (Binary op : {Binary::Add, Binary::Sub, Binary::Mul, Binary::Div}) {
    Tensor a = uniform({2, 3, 2, 4}, rng);
    // Divisors kept away from zero.
    Tensor b = op == Binary::Div ? away_from_zero({2, 3, 1, 1}, rng, 0.5f, 2.0f)
                                 : uniform({2, 3, 1, 1}, rng);
    Tensor y({2, 3, 2, 4}), r = uniform(y.shape(), rng);
    auto objective = [&] {
      binary_forward(op, a, b, y);
      return project(y, r);
    };
    Tensor da(a.shape()), db(b.shape());
    binary_backward(op, a, b, r, &da, &db);
    const std::string what = "op " + std::to_string(static_cast<int>(op));
    expect_gradient(what + " a", a, da, objective);
    expect_gradient(what + " b", b, db, objective);
  }
}
