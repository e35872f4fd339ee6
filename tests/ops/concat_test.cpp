#include <gtest/gtest.h>

#include <array>

#include "ops/kernels.hpp"
#include "test_util.hpp"

using namespace telar;
using namespace telar::ops;
using namespace telar::ops::testing;

TEST(OpsConcat, ForwardBackwardByHand) {
  Tensor a = f32({1, 2}, {2, 1}), b = f32({3, 4, 5, 6, 7, 8}, {2, 3});
  std::array<Tensor, 2> parts{a, b};
  Tensor y({2, 4});
  concat_forward(1, parts, y);
  expect_values(y, {1, 3, 4, 5, 2, 6, 7, 8});
  std::array<Tensor, 2> grads{Tensor({2, 1}), Tensor({2, 3})};
  concat_backward(1, y, grads);
  expect_close(grads[0], a, 0);
  expect_close(grads[1], b, 0);
}

TEST(OpsConcat, ChannelsOfFeatureMapsAndOtherDtypes) {
  // NCHW along C: each sample's planes are stacked.
  Tensor a = f32({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2, 1});
  Tensor b = f32({-1, -2, -3, -4}, {2, 1, 2, 1});
  std::array<Tensor, 2> parts{a, b};
  Tensor y({2, 3, 2, 1});
  concat_forward(1, parts, y);
  expect_values(y, {1, 2, 3, 4, -1, -2, 5, 6, 7, 8, -3, -4});
  // Bytes are moved, so integer tensors concatenate too.
  Tensor i({1, 2}, DType::I64), j({1, 1}, DType::I64), k({1, 3}, DType::I64);
  i.data<std::int64_t>()[0] = 7;
  i.data<std::int64_t>()[1] = 8;
  j.data<std::int64_t>()[0] = 9;
  std::array<Tensor, 2> ints{i, j};
  concat_forward(1, ints, k);
  EXPECT_EQ(k.data<std::int64_t>()[0], 7);
  EXPECT_EQ(k.data<std::int64_t>()[1], 8);
  EXPECT_EQ(k.data<std::int64_t>()[2], 9);
}

TEST(OpsConcat, GradientsMatchFiniteDifferences) {
  Rng rng(101);
  std::array<Tensor, 3> parts{uniform({2, 3, 2}, rng), uniform({2, 1, 2}, rng),
                              uniform({2, 2, 2}, rng)};
  Tensor y({2, 6, 2}), r = uniform(y.shape(), rng);
  auto objective = [&] {
    concat_forward(1, parts, y);
    return project(y, r);
  };
  std::array<Tensor, 3> grads{Tensor({2, 3, 2}), Tensor({2, 1, 2}), Tensor({2, 2, 2})};
  concat_backward(1, r, grads);
  for (int k = 0; k < 3; ++k) expect_gradient("part " + std::to_string(k), parts[k], grads[k], objective);
}

// Along the other axes of NCHW: rows (axis 2) of each sample's channel follow one another, and
// along the width (axis 3) each row's pixels do.
TEST(OpsConcat, AlongHeightAndWidthByHand) {
  const Tensor a = f32({1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 2, 2});  // channels [[1 2] [3 4]], ...
  const Tensor b = f32({-1, -2, -3, -4}, {1, 2, 1, 2});          // one row per channel
  std::array<Tensor, 2> rows{a, b};
  Tensor taller({1, 2, 3, 2});
  concat_forward(2, rows, taller);
  expect_values(taller, {1, 2, 3, 4, -1, -2, 5, 6, 7, 8, -3, -4});
  std::array<Tensor, 2> row_grads{Tensor({1, 2, 2, 2}), Tensor({1, 2, 1, 2})};
  concat_backward(2, taller, row_grads);
  expect_close(row_grads[0], a, 0);
  expect_close(row_grads[1], b, 0);
  const Tensor c = f32({9, 10, 11, 12}, {1, 2, 2, 1});  // one column per channel
  std::array<Tensor, 2> columns{a, c};
  Tensor wider({1, 2, 2, 3});
  concat_forward(3, columns, wider);
  expect_values(wider, {1, 2, 9, 3, 4, 10, 5, 6, 11, 7, 8, 12});
  std::array<Tensor, 2> grads{Tensor({1, 2, 2, 2}), Tensor({1, 2, 2, 1})};
  concat_backward(3, wider, grads);
  expect_close(grads[0], a, 0);
  expect_close(grads[1], c, 0);
}

TEST(OpsConcat, GradientsAlongTheLastAxisMatchFiniteDifferences) {
  Rng rng(103);
  std::array<Tensor, 2> parts{uniform({2, 3, 2}, rng), uniform({2, 3, 3}, rng)};
  Tensor y({2, 3, 5}), r = uniform(y.shape(), rng);
  auto objective = [&] {
    concat_forward(2, parts, y);
    return project(y, r);
  };
  std::array<Tensor, 2> grads{Tensor({2, 3, 2}), Tensor({2, 3, 3})};
  concat_backward(2, r, grads);
  for (int k = 0; k < 2; ++k)
    expect_gradient("part " + std::to_string(k), parts[k], grads[k], objective);
}
