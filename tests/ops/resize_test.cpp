// Resize: hand-derived values of each mode and its gradient by finite differences.
#include <gtest/gtest.h>

#include <string>

#include "ops/kernels.hpp"
#include "test_util.hpp"

using namespace telar;
using namespace telar::ops;
using namespace telar::ops::testing;

namespace {

graph::ResizeAttrs resize_to(graph::ResizeMode mode, std::int64_t h, std::int64_t w,
                             bool align_corners = false) {
  graph::ResizeAttrs a;
  a.mode = mode;
  a.align_corners = align_corners;
  a.out_h = h;
  a.out_w = w;
  return a;
}

// x = [[1, 2], [3, 4]]. Linear with half pixels to 4x4: each axis's outputs read the inputs at
// -0.25 (clamped to 0), 0.25, 0.75 and 1.25 (the last pixel repeated beyond 1). Aligned
// corners to 3x3: at 0, 0.5, 1. Nearest to 4x3: rows floor(o * 2 / 4), columns floor(o * 2 / 3).
TEST(OpsResize, ForwardMatchesHandValues) {
  const Tensor x = f32({1, 2, 3, 4}, {1, 1, 2, 2});
  Tensor y({1, 1, 4, 4});
  resize_forward(resize_to(graph::ResizeMode::Linear, 4, 4), x, y);
  expect_values(y, {1.0f, 1.25f, 1.75f, 2.0f, 1.5f, 1.75f, 2.25f, 2.5f,  //
                    2.5f, 2.75f, 3.25f, 3.5f, 3.0f, 3.25f, 3.75f, 4.0f});
  Tensor corners({1, 1, 3, 3});
  resize_forward(resize_to(graph::ResizeMode::Linear, 3, 3, true), x, corners);
  expect_values(corners, {1.0f, 1.5f, 2.0f, 2.0f, 2.5f, 3.0f, 3.0f, 3.5f, 4.0f});
  Tensor nearest({1, 1, 4, 3});
  resize_forward(resize_to(graph::ResizeMode::Nearest, 4, 3), x, nearest);
  expect_values(nearest, {1, 1, 2, 1, 1, 2, 3, 3, 4, 3, 3, 4});
}

// Down by 2 along a row of four: the outputs read the inputs at 0.5 and 2.5, each the mean of
// two; the gradient goes back half to each.
TEST(OpsResize, LinearDownsamplingAndItsBackwardByHand) {
  const Tensor x = f32({1, 2, 3, 7}, {1, 1, 1, 4});
  Tensor y({1, 1, 1, 2});
  const auto a = resize_to(graph::ResizeMode::Linear, 1, 2);
  resize_forward(a, x, y);
  expect_values(y, {1.5f, 5.0f});
  Tensor dx({1, 1, 1, 4});
  resize_backward(a, f32({2, 4}, {1, 1, 1, 2}), dx);
  expect_values(dx, {1, 1, 2, 2});
}

TEST(OpsResize, GradientMatchesFiniteDifferences) {
  Rng rng(91);
  const graph::ResizeAttrs cases[] = {
      resize_to(graph::ResizeMode::Linear, 7, 4),        // up rows, down columns, fractional
      resize_to(graph::ResizeMode::Linear, 5, 9, true),  // aligned corners
      resize_to(graph::ResizeMode::Linear, 1, 2, true),  // to one row
      resize_to(graph::ResizeMode::Nearest, 7, 5),
  };
  for (const auto& a : cases) {
    SCOPED_TRACE(std::string(graph::mode_name(a.mode)) + " to " + std::to_string(a.out_h) + "x" +
                 std::to_string(a.out_w));
    Tensor x = uniform({2, 2, 3, 5}, rng), y({2, 2, a.out_h, a.out_w});
    const Tensor r = uniform(y.shape(), rng);
    auto objective = [&] {
      resize_forward(a, x, y);
      return project(y, r);
    };
    Tensor dx(x.shape());
    resize_backward(a, r, dx);
    expect_gradient("resize", x, dx, objective);
  }
}

}  // namespace
