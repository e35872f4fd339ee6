#include <gtest/gtest.h>

#include "graph/shape_inference.hpp"
#include "ops/kernels.hpp"
#include "test_util.hpp"

using namespace telar;
using namespace telar::ops;
using namespace telar::ops::testing;

namespace {

Pool2dAttrs pool(std::int64_t k, std::int64_t s, std::int64_t p, bool include_pad = true) {
  Pool2dAttrs a;
  a.kernel_h = a.kernel_w = k;
  a.stride_h = a.stride_w = s;
  a.pad_h = a.pad_w = p;
  a.count_include_pad = include_pad;
  return a;
}

Shape out_shape(const Pool2dAttrs& a, const Tensor& x) {
  return {x.dim(0), x.dim(1), graph::window_output_size(x.dim(2), a.kernel_h, a.stride_h, a.pad_h),
          graph::window_output_size(x.dim(3), a.kernel_w, a.stride_w, a.pad_w)};
}

// 4x4 plane:  1 5 2 0 / 3 4 8 7 / 9 1 0 6 / 2 3 4 5
Tensor plane4() { return f32({1, 5, 2, 0, 3, 4, 8, 7, 9, 1, 0, 6, 2, 3, 4, 5}, {1, 1, 4, 4}); }

std::vector<std::int32_t> indices(const Tensor& t) {
  return {t.data<std::int32_t>(), t.data<std::int32_t>() + t.numel()};
}

}  // namespace

TEST(OpsMaxPool, ForwardByHand) {
  Tensor x = plane4();
  Pool2dAttrs a = pool(2, 2, 0);
  Tensor y(out_shape(a, x)), arg(y.shape(), DType::I32);
  maxpool2d_forward(a, x, y, arg);
  expect_values(y, {5, 8, 9, 6});
  EXPECT_EQ(indices(arg), (std::vector<std::int32_t>{1, 6, 8, 11}));
  // 3x3 windows, stride 2, pad 1: the two right-hand windows share the 8 at flat index 6.
  Pool2dAttrs b = pool(3, 2, 1);
  Tensor y2(out_shape(b, x)), arg2(y2.shape(), DType::I32);
  maxpool2d_forward(b, x, y2, arg2);
  expect_values(y2, {5, 8, 9, 8});
  EXPECT_EQ(indices(arg2), (std::vector<std::int32_t>{1, 6, 8, 6}));
}

TEST(OpsMaxPool, PaddingIsMinusInfinityAndTiesGoFirst) {
  // All-negative input with padding: a padded zero must never win.
  Tensor x = f32({-1, -2, -3, -4}, {1, 1, 2, 2});
  Pool2dAttrs a = pool(3, 1, 1);
  Tensor y(out_shape(a, x)), arg(y.shape(), DType::I32);
  maxpool2d_forward(a, x, y, arg);
  expect_values(y, {-1, -1, -1, -1});
  // Ties: the first maximum in window (row-major) order.
  Tensor t = f32({3, 7, 7, 7}, {1, 1, 2, 2});
  Pool2dAttrs b = pool(2, 2, 0);
  Tensor yt({1, 1, 1, 1}), at({1, 1, 1, 1}, DType::I32);
  maxpool2d_forward(b, t, yt, at);
  EXPECT_EQ(at.data<std::int32_t>()[0], 1);
}

TEST(OpsMaxPool, BackwardRoutesToArgmaxAndAccumulatesOverlaps) {
  Tensor x = plane4();
  Pool2dAttrs a = pool(3, 2, 1);
  Tensor y(out_shape(a, x)), arg(y.shape(), DType::I32);
  maxpool2d_forward(a, x, y, arg);
  Tensor dy = f32({1, 2, 3, 4}, y.shape()), dx(x.shape());
  dx.fill(5.0f);
  maxpool2d_backward(a, arg, dy, dx);
  expect_values(dx, {0, 1, 0, 0, 0, 0, 2 + 4, 0, 3, 0, 0, 0, 0, 0, 0, 0});
}

TEST(OpsMaxPool, GradientMatchesFiniteDifferences) {
  Rng rng(81);
  Pool2dAttrs a = pool(3, 2, 1);
  Tensor x = distinct({2, 2, 5, 5}, rng);
  Tensor y(out_shape(a, x)), arg(y.shape(), DType::I32), r = uniform(y.shape(), rng);
  auto objective = [&] {
    maxpool2d_forward(a, x, y, arg);
    return project(y, r);
  };
  objective();
  Tensor dx(x.shape());
  maxpool2d_backward(a, arg, r, dx);
  expect_gradient("dx", x, dx, objective);
}

TEST(OpsAvgPool, PaddingWithAndWithoutCountIncludePad) {
  // 1..16 on 4x4, 3x3 windows, stride 2, pad 1. In-bounds sums 14, 30, 57, 99 over 4, 6, 6
  // and 9 real elements.
  Tensor x({1, 1, 4, 4});
  for (int i = 0; i < 16; ++i) x.f32()[i] = static_cast<float>(i + 1);
  Pool2dAttrs incl = pool(3, 2, 1, true), excl = pool(3, 2, 1, false);
  Tensor y(out_shape(incl, x));
  avgpool2d_forward(incl, x, y);
  expect_values(y, {14 / 9.0f, 30 / 9.0f, 57 / 9.0f, 11});
  avgpool2d_forward(excl, x, y);
  expect_values(y, {3.5f, 5, 9.5f, 11});
}

TEST(OpsAvgPool, BackwardByHand) {
  // Only the corner window's gradient is set: it spreads over its 4 real elements, divided by
  // 9 (padding counted) or 4 (real elements only).
  Pool2dAttrs incl = pool(3, 2, 1, true), excl = pool(3, 2, 1, false);
  Tensor dy = f32({1, 0, 0, 0}, {1, 1, 2, 2}), dx({1, 1, 4, 4});
  avgpool2d_backward(incl, dy, dx);
  const float n = 1 / 9.0f, q = 0.25f;
  expect_values(dx, {n, n, 0, 0, n, n, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  avgpool2d_backward(excl, dy, dx);
  expect_values(dx, {q, q, 0, 0, q, q, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
}

TEST(OpsAvgPool, GradientsMatchFiniteDifferences) {
  Rng rng(82);
  for (const Pool2dAttrs& a : {pool(3, 2, 1, true), pool(3, 2, 1, false), pool(2, 1, 1, false)}) {
    Tensor x = uniform({2, 2, 5, 6}, rng);
    Tensor y(out_shape(a, x)), r = uniform(y.shape(), rng);
    auto objective = [&] {
      avgpool2d_forward(a, x, y);
      return project(y, r);
    };
    Tensor dx(x.shape());
    avgpool2d_backward(a, r, dx);
    expect_gradient(a.count_include_pad ? "dx (count pad)" : "dx (real only)", x, dx, objective);
  }
}

TEST(OpsGlobalAvgPool, ForwardBackwardByHand) {
  Tensor x = f32({1, 2, 3, 4, 10, 20, 30, 40}, {1, 2, 2, 2});
  Tensor y({1, 2});
  global_avgpool_forward(x, y);
  expect_values(y, {2.5f, 25});
  Tensor dy = f32({4, -8}, {1, 2}), dx(x.shape());
  global_avgpool_backward(dy, dx);
  expect_values(dx, {1, 1, 1, 1, -2, -2, -2, -2});
}

TEST(OpsGlobalAvgPool, GradientMatchesFiniteDifferences) {
  Rng rng(83);
  Tensor x = uniform({2, 3, 3, 4}, rng), y({2, 3}), r = uniform({2, 3}, rng);
  auto objective = [&] {
    global_avgpool_forward(x, y);
    return project(y, r);
  };
  Tensor dx(x.shape());
  global_avgpool_backward(r, dx);
  expect_gradient("dx", x, dx, objective);
}
