// Transpose, Slice, Pad and ReduceMean.
#include <gtest/gtest.h>

#include <array>
#include <limits>

#include "ops/kernels.hpp"
#include "test_util.hpp"

using namespace telar;
using namespace telar::ops;
using namespace telar::ops::testing;

TEST(OpsTranspose, ForwardByHand) {
  // [1, 2, 3] -> perm (0, 2, 1) -> [1, 3, 2].
  Tensor x = f32({1, 2, 3, 4, 5, 6}, {1, 2, 3}), y({1, 3, 2});
  const std::array<std::int64_t, 3> perm{0, 2, 1};
  transpose_forward(perm, x, y);
  expect_values(y, {1, 4, 2, 5, 3, 6});
  // ShuffleNet's channel shuffle: [B, g, C/g, H, W] with perm (0, 2, 1, 3, 4), g = 2, C = 4.
  Tensor c = f32({0, 1, 2, 3}, {1, 2, 2, 1, 1}), d({1, 2, 2, 1, 1});
  const std::array<std::int64_t, 5> shuffle{0, 2, 1, 3, 4};
  transpose_forward(shuffle, c, d);
  expect_values(d, {0, 2, 1, 3});
}

TEST(OpsTranspose, GradientMatchesFiniteDifferences) {
  Rng rng(81);
  Tensor x = uniform({2, 3, 4, 2}, rng), y({2, 4, 2, 3});
  const std::array<std::int64_t, 4> perm{0, 2, 3, 1};
  Tensor r = uniform(y.shape(), rng);
  auto objective = [&] {
    transpose_forward(perm, x, y);
    return project(y, r);
  };
  Tensor dx(x.shape());
  transpose_backward(perm, r, dx);
  expect_gradient("transpose", x, dx, objective);
}

TEST(OpsSlice, ForwardBackwardByHand) {
  // Channels [1, 3) of [2, 3, 2].
  Tensor x = f32({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 3, 2}), y({2, 2, 2});
  const graph::SliceAttrs a{1, 1, 3, {}};
  slice_forward(a, x, y);
  expect_values(y, {3, 4, 5, 6, 9, 10, 11, 12});
  Tensor dx({2, 3, 2});
  slice_backward(a, y, dx);
  expect_values(dx, {0, 0, 3, 4, 5, 6, 0, 0, 9, 10, 11, 12});
  // The last axis.
  Tensor z({2, 3, 1});
  slice_forward({2, 0, 1, {}}, x, z);
  expect_values(z, {1, 3, 5, 7, 9, 11});
}

TEST(OpsSlice, GradientMatchesFiniteDifferences) {
  Rng rng(82);
  const graph::SliceAttrs a{2, 1, 3, {}};
  Tensor x = uniform({2, 2, 4, 3}, rng), y({2, 2, 2, 3}), r = uniform(y.shape(), rng);
  auto objective = [&] {
    slice_forward(a, x, y);
    return project(y, r);
  };
  Tensor dx(x.shape());
  slice_backward(a, r, dx);
  // Elements outside the slice have gradient 0 both ways; the check covers every element.
  expect_gradient("slice", x, dx, objective);
}

// Every second column of 5 (x[..., 0::2]: columns 0, 2, 4) and every third row from row 1 of 6
// (x[:, :, 1::3]: rows 1 and 4); the backward puts the gradient back where each came from.
TEST(OpsSlice, StridedByHand) {
  Tensor x = f32({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {1, 2, 5}), y({1, 2, 3});
  graph::SliceAttrs a{2, 0, 5, {2}};
  slice_forward(a, x, y);
  expect_values(y, {1, 3, 5, 6, 8, 10});
  Tensor dx({1, 2, 5});
  slice_backward(a, f32({1, 2, 3, 4, 5, 6}, {1, 2, 3}), dx);
  expect_values(dx, {1, 0, 2, 0, 3, 4, 0, 5, 0, 6});
  Tensor rows = f32({0, 1, 10, 11, 20, 21, 30, 31, 40, 41, 50, 51}, {1, 1, 6, 2}),
         taken({1, 1, 2, 2});
  graph::SliceAttrs b{2, 1, 6, {3}};
  slice_forward(b, rows, taken);
  expect_values(taken, {10, 11, 40, 41});
}

TEST(OpsSlice, StridedGradientMatchesFiniteDifferences) {
  Rng rng(84);
  graph::SliceAttrs a{3, 1, 6, {2}};  // columns 1, 3, 5
  Tensor x = uniform({2, 2, 3, 6}, rng), y({2, 2, 3, 3}), r = uniform(y.shape(), rng);
  auto objective = [&] {
    slice_forward(a, x, y);
    return project(y, r);
  };
  Tensor dx(x.shape());
  slice_backward(a, r, dx);
  expect_gradient("strided slice", x, dx, objective);
}

TEST(OpsPad, ForwardBackwardByHand) {
  Tensor x = f32({1, 2, 3, 4}, {1, 1, 2, 2}), y({1, 1, 3, 5});
  graph::PadAttrs a;
  a.top = 1, a.left = 2, a.bottom = 0, a.right = 1, a.value = -1;
  pad_forward(a, x, y);
  expect_values(y, {-1, -1, -1, -1, -1,  //
                    -1, -1, 1, 2, -1,    //
                    -1, -1, 3, 4, -1});
  Tensor dy = f32({0, 0, 0, 0, 0, 0, 0, 5, 6, 0, 0, 0, 7, 8, 0}, {1, 1, 3, 5}), dx({1, 1, 2, 2});
  pad_backward(a, dy, dx);
  expect_values(dx, {5, 6, 7, 8});
  // -inf pads the input of a max pooling.
  a.value = -std::numeric_limits<float>::infinity();
  pad_forward(a, x, y);
  EXPECT_EQ(y.f32()[0], -std::numeric_limits<float>::infinity());
}

TEST(OpsPad, GradientMatchesFiniteDifferences) {
  Rng rng(83);
  graph::PadAttrs a;
  a.top = 0, a.left = 1, a.bottom = 2, a.right = 1;
  Tensor x = uniform({2, 2, 3, 3}, rng), y({2, 2, 5, 5}), r = uniform(y.shape(), rng);
  auto objective = [&] {
    pad_forward(a, x, y);
    return project(y, r);
  };
  Tensor dx(x.shape());
  pad_backward(a, r, dx);
  expect_gradient("pad", x, dx, objective);
}

TEST(OpsReduceMean, ForwardBackwardByHand) {
  // The mean over the last axis of [2, 3] and over the middle axis of [1, 2, 2].
  Tensor x = f32({1, 2, 6, -1, 0, 4}, {2, 3}), y({2, 1});
  reduce_mean_forward(1, x, y);
  expect_values(y, {3, 1});
  Tensor dx({2, 3});
  reduce_mean_backward(1, f32({3, 6}, {2, 1}), dx);
  expect_values(dx, {1, 1, 1, 2, 2, 2});
  Tensor z = f32({1, 2, 5, 10}, {1, 2, 2}), m({1, 1, 2});
  reduce_mean_forward(1, z, m);
  expect_values(m, {3, 6});
  // Rows longer than the kernel's 16 partial sums, with a remainder: row r of [3, 37] holds
  // r, r + 1, ..., r + 36, whose mean is r + 18.
  Tensor long_rows({3, 37}), means({3, 1});
  for (std::int64_t r = 0; r < 3; ++r)
    for (std::int64_t k = 0; k < 37; ++k) long_rows.f32()[r * 37 + k] = static_cast<float>(r + k);
  reduce_mean_forward(1, long_rows, means);
  expect_values(means, {18, 19, 20});
}

TEST(OpsReduceMean, GradientMatchesFiniteDifferences) {
  Rng rng(84);
  Tensor x = uniform({2, 3, 4, 2}, rng), y({2, 3, 1, 2}), r = uniform(y.shape(), rng);
  auto objective = [&] {
    reduce_mean_forward(2, x, y);
    return project(y, r);
  };
  Tensor dx(x.shape());
  reduce_mean_backward(2, r, dx);
  expect_gradient("reduce mean", x, dx, objective);
}
