// The import-time folds of constants (constant_folds.hpp) against values worked out by hand
// from the ONNX operator definitions: numpy broadcasting, negative indices and steps, integer
// Mod's sign, ScatterND's slices, and the batch marks that Swin's window sizes carry.
#include "onnx/constant_folds.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "train/test_support.hpp"

namespace telar::onnx {
namespace {

using Batch = Constant::Batch;

Constant floats(std::vector<float> values, std::vector<std::int64_t> dims) {
  Constant c;
  c.f = std::move(values);
  c.dims = std::move(dims);
  return c;
}

std::vector<std::int64_t> iota(std::int64_t n) {
  std::vector<std::int64_t> v;
  for (std::int64_t k = 0; k < n; ++k) v.push_back(k);
  return v;
}

TEST(ConstantFolds, ArithmeticBroadcastsAndFollowsOnnxIntegerRules) {
  // [2, 3] + [3]: each row plus the vector.
  const Constant sum = arithmetic("t", Arithmetic::Add, int_constant(iota(6), {2, 3}),
                                  int_constant({10, 20, 30}, {3}));
  EXPECT_EQ(sum.dims, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(sum.i, (std::vector<std::int64_t>{10, 21, 32, 13, 24, 35}));
  // [2, 1] * [1, 3]: an outer product.
  const Constant outer = arithmetic("t", Arithmetic::Mul, int_constant({2, 3}, {2, 1}),
                                    int_constant({1, 10, 100}, {1, 3}));
  EXPECT_EQ(outer.dims, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(outer.i, (std::vector<std::int64_t>{2, 20, 200, 3, 30, 300}));
  // Integer Div truncates; Mod takes the divisor's sign, FMod the dividend's.
  const Constant a = int_constant({-7, 7, -7, 7}, {4}), b = int_constant({2, -3, 3, 3}, {4});
  EXPECT_EQ(arithmetic("t", Arithmetic::Div, a, b).i, (std::vector<std::int64_t>{-3, -2, -2, 2}));
  EXPECT_EQ(arithmetic("t", Arithmetic::Mod, a, b).i, (std::vector<std::int64_t>{1, -2, 2, 1}));
  EXPECT_EQ(arithmetic("t", Arithmetic::FMod, a, b).i, (std::vector<std::int64_t>{-1, 1, -1, 1}));
  // Swin's (window - W % window) % window for W = 16 and 14, window 7: 5 and 0.
  const Constant pad = arithmetic(
      "t", Arithmetic::Mod,
      arithmetic(
          "t", Arithmetic::Sub, int_constant({7}, {}),
          arithmetic("t", Arithmetic::Mod, int_constant({16, 14}, {2}), int_constant({7}, {}))),
      int_constant({7}, {}));
  EXPECT_EQ(pad.i, (std::vector<std::int64_t>{5, 0}));
  // Pow keeps its base's type: 32 ** -0.5 in floats, 3 ** 2 in integers.
  EXPECT_FLOAT_EQ(arithmetic("t", Arithmetic::Pow, floats({32.0f}, {}), floats({-0.5f}, {})).f[0],
                  0.17677669f);
  EXPECT_EQ(arithmetic("t", Arithmetic::Pow, int_constant({3}, {}), floats({2.0f}, {})).i,
            (std::vector<std::int64_t>{9}));
  train::testing::expect_error(
      [] {
        arithmetic("node 'm' (Mod)", Arithmetic::Mod, int_constant({1}, {1}),
                   int_constant({0}, {1}));
      },
      {"node 'm' (Mod)", "division by zero"});
  train::testing::expect_error(
      [] {
        arithmetic("t", Arithmetic::Add, int_constant(iota(6), {2, 3}), int_constant(iota(2), {2}));
      },
      {"[2, 3] and [2]", "do not broadcast"});
}

TEST(ConstantFolds, BatchMultiplesSurviveWholeProductsAndExactDivisions) {
  // B*64 (the windows of Swin's first stage merged with the batch), as Shape of a view gives it.
  Constant windows = int_constant({64}, {1});
  windows.batch = {Batch::Times};
  const Constant per_image = arithmetic("t", Arithmetic::Div, windows, int_constant({64}, {1}));
  EXPECT_EQ(per_image.i, (std::vector<std::int64_t>{1}));
  EXPECT_EQ(per_image.batch, (std::vector<Batch>{Batch::Times}));  // B*1: the batch
  const Constant halves = arithmetic("t", Arithmetic::Div, windows, int_constant({3}, {1}));
  EXPECT_EQ(halves.batch, (std::vector<Batch>{Batch::From}));  // B*64 // 3 is no multiple
  const Constant rest = arithmetic("t", Arithmetic::Mod, windows, int_constant({7}, {1}));
  EXPECT_EQ(rest.batch, (std::vector<Batch>{Batch::From}));
  Constant b = int_constant({1}, {1});
  b.batch = {Batch::Is};
  EXPECT_EQ(arithmetic("t", Arithmetic::Mul, b, int_constant({3}, {1})).batch,
            (std::vector<Batch>{Batch::Times}));
  EXPECT_EQ(arithmetic("t", Arithmetic::Add, b, int_constant({3}, {1})).batch,
            (std::vector<Batch>{Batch::From}));
}

// Swin's shifted-window mask: window ids a[k], m = a[:, None] - a[None, :], then
// where(m != 0, -100, 0).
TEST(ConstantFolds, EqualNotAndWhereBuildAMaskByBroadcasting) {
  const Constant m =
      arithmetic("t", Arithmetic::Sub, floats({0, 0, 1}, {3, 1}), floats({0, 0, 1}, {1, 3}));
  EXPECT_EQ(m.f, (std::vector<float>{0, 0, -1, 0, 0, -1, 1, 1, 0}));
  const Constant differs = logical_not("t", equal("t", m, floats({0.0f}, {})));
  EXPECT_EQ(differs.i, (std::vector<std::int64_t>{0, 0, 1, 0, 0, 1, 1, 1, 0}));
  const Constant mask = where("t", differs, floats({-100.0f}, {}), floats({0.0f}, {}));
  EXPECT_EQ(mask.dims, (std::vector<std::int64_t>{3, 3}));
  EXPECT_EQ(mask.f, (std::vector<float>{0, 0, -100, 0, 0, -100, -100, -100, 0}));
  // The batch compared with -1 is unequal whatever it is (expand(B, -1)'s test).
  Constant b = int_constant({1}, {1});
  b.batch = {Batch::Is};
  const Constant e = equal("t", b, int_constant({-1}, {1}));
  EXPECT_EQ(e.i, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(e.batch, (std::vector<Batch>{Batch::No}));
}

TEST(ConstantFolds, ExpandConcatAndTransposeMoveValuesAsNumpy) {
  const Constant col = int_constant({1, 2}, {2, 1});
  const Constant e = expand("t", col, {3, 1, 2});
  EXPECT_EQ(e.dims, (std::vector<std::int64_t>{3, 2, 2}));
  EXPECT_EQ(e.i, (std::vector<std::int64_t>{1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2}));
  const Constant a = int_constant({1, 2}, {2, 1}), b = int_constant({3, 4, 5, 6}, {2, 2});
  const Constant c = concat("t", {&a, &b}, -1);
  EXPECT_EQ(c.dims, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(c.i, (std::vector<std::int64_t>{1, 3, 4, 2, 5, 6}));
  const Constant t = transpose("t", c, {});
  EXPECT_EQ(t.dims, (std::vector<std::int64_t>{3, 2}));
  EXPECT_EQ(t.i, (std::vector<std::int64_t>{1, 2, 3, 5, 4, 6}));
  // [2, 3, 4] by perm [2, 0, 1]: out[k][i][j] = x[i][j][k] = 12i + 4j + k.
  const Constant p = transpose("t", int_constant(iota(24), {2, 3, 4}), {2, 0, 1});
  EXPECT_EQ(p.dims, (std::vector<std::int64_t>{4, 2, 3}));
  EXPECT_EQ(p.i[0 * 6 + 1 * 3 + 2], 12 + 8 + 0);
  EXPECT_EQ(p.i[3 * 6 + 0 * 3 + 1], 0 + 4 + 3);
  train::testing::expect_error([&] { concat("t", {&a, &t}, 0); }, {"Concat along axis 0"});
  // Marks move with their elements.
  Constant shape = int_constant({1, 49, 96}, {3});
  shape.batch = {Batch::Is, Batch::No, Batch::No};
  const Constant joined = concat("t", {&shape, &shape}, 0);
  EXPECT_EQ(joined.batch,
            (std::vector<Batch>{Batch::Is, Batch::No, Batch::No, Batch::Is, Batch::No, Batch::No}));
  train::testing::expect_error(
      [] {
        expand("t", int_constant({1}, {1}), {8192, 4096});
      },
      {"[8192, 4096]", "more than"});
}

TEST(ConstantFolds, SliceWalksForwardsAndBackwardsAlongAnyAxes) {
  const Constant x = int_constant(iota(10), {10});
  EXPECT_EQ(slice("t", x, {-1}, {-100}, {0}, {-3}).i, (std::vector<std::int64_t>{9, 6, 3, 0}));
  EXPECT_EQ(slice("t", x, {2}, {std::numeric_limits<std::int64_t>::max()}, {0}, {3}).i,
            (std::vector<std::int64_t>{2, 5, 8}));
  EXPECT_TRUE(slice("t", x, {5}, {2}, {0}, {1}).i.empty());
  // [3, 4]: rows 1 on, every other column from the last backwards.
  const Constant m =
      slice("t", int_constant(iota(12), {3, 4}), {1, -1}, {10, -10}, {0, 1}, {1, -2});
  EXPECT_EQ(m.dims, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(m.i, (std::vector<std::int64_t>{7, 5, 11, 9}));
  train::testing::expect_error([&] { slice("t", x, {0}, {1}, {0}, {0}); }, {"step of 0"});
}

TEST(ConstantFolds, GatherTakesEntriesOfAnyAxisByIndicesOfAnyRank) {
  // Swin's relative-position bias: a [4, 2] table (positions x heads) by a [2, 2] index.
  const Constant table = floats({0, 1, 10, 11, 20, 21, 30, 31}, {4, 2});
  const Constant g = gather("t", table, int_constant({3, 0, -3, 1}, {2, 2}), 0);
  EXPECT_EQ(g.dims, (std::vector<std::int64_t>{2, 2, 2}));
  EXPECT_EQ(g.f, (std::vector<float>{30, 31, 0, 1, 10, 11, 10, 11}));
  const Constant cols = gather("t", table, int_constant({1}, {}), 1);
  EXPECT_EQ(cols.dims, (std::vector<std::int64_t>{4}));
  EXPECT_EQ(cols.f, (std::vector<float>{1, 11, 21, 31}));
  train::testing::expect_error([&] { gather("t", table, int_constant({4}, {1}), 0); },
                               {"index 4", "out of range"});
}

TEST(ConstantFolds, RangeAndScatterNdBuildIndexTables) {
  EXPECT_EQ(range("t", int_constant({0}, {}), int_constant({5}, {}), int_constant({2}, {})).i,
            (std::vector<std::int64_t>{0, 2, 4}));
  EXPECT_EQ(range("t", int_constant({5}, {}), int_constant({0}, {}), int_constant({-2}, {})).i,
            (std::vector<std::int64_t>{5, 3, 1}));
  EXPECT_TRUE(
      range("t", int_constant({5}, {}), int_constant({0}, {}), int_constant({1}, {})).i.empty());
  EXPECT_EQ(range("t", floats({0.5f}, {}), floats({2.0f}, {}), floats({0.5f}, {})).f,
            (std::vector<float>{0.5f, 1.0f, 1.5f}));
  train::testing::expect_error(
      [] { range("t", int_constant({0}, {}), int_constant({5}, {}), int_constant({0}, {})); },
      {"delta of 0"});
  // Elements: (0, 1) <- 5 and (2, 2) <- 6 of a 3x3 of zeros.
  const Constant zeros = floats(std::vector<float>(9, 0.0f), {3, 3});
  const Constant s =
      scatter_nd("t", zeros, int_constant({0, 1, 2, 2}, {2, 2}), floats({5, 6}, {2}));
  EXPECT_EQ(s.f, (std::vector<float>{0, 5, 0, 0, 0, 0, 0, 0, 6}));
  // Rows: row -1 (the last) <- [7, 8, 9].
  const Constant r = scatter_nd("t", zeros, int_constant({-1}, {1, 1}), floats({7, 8, 9}, {1, 3}));
  EXPECT_EQ(r.f, (std::vector<float>{0, 0, 0, 0, 0, 0, 7, 8, 9}));
  train::testing::expect_error(
      [&] {
        scatter_nd("t", zeros, int_constant({0, 1}, {1, 2}), floats({5, 6}, {2}));
      },
      {"updates of shape [2]", "[1]"});
}

TEST(ConstantFolds, CastToBoolTestsForNonZeroAndForgetsTheBatch) {
  const Constant b = cast(floats({0.5f, 0.0f, -2.0f}, {3}), CastTo::Bool);
  EXPECT_TRUE(b.integer);
  EXPECT_EQ(b.i, (std::vector<std::int64_t>{1, 0, 1}));
  EXPECT_EQ(cast(floats({2.7f, -2.7f}, {2}), CastTo::Integer).i,
            (std::vector<std::int64_t>{2, -2}));
  Constant batch = int_constant({1}, {1});
  batch.batch = {Batch::Is};
  EXPECT_EQ(cast(batch, CastTo::Bool).batch, (std::vector<Batch>{Batch::From}));
  EXPECT_EQ(cast(batch, CastTo::Float).f, (std::vector<float>{1.0f}));
}

// An element taken at an index computed from the batch is computed from it, whatever it holds.
TEST(ConstantFolds, IndicesThatDependOnTheBatchMarkWhatTheyTake) {
  Constant index = int_constant({0}, {1});
  index.batch = {Batch::From};
  const Constant g = gather("t", int_constant({7, 8}, {2}), index, 0);
  EXPECT_EQ(g.batch, (std::vector<Batch>{Batch::From}));
  const Constant s =
      scatter_nd("t", int_constant({7, 8}, {2}), int_constant({1}, {1, 1}), int_constant({9}, {1}));
  EXPECT_EQ(s.i, (std::vector<std::int64_t>{7, 9}));
  EXPECT_TRUE(s.batch.empty());
  Constant marked_index = int_constant({1}, {1, 1});
  marked_index.batch = {Batch::From};
  EXPECT_EQ(scatter_nd("t", int_constant({7, 8}, {2}), marked_index, int_constant({9}, {1})).batch,
            (std::vector<Batch>{Batch::From, Batch::From}));
}

// Bounds a damaged or hostile file may hold: exact counts, errors instead of overflows.
TEST(ConstantFolds, ExtremeBoundsAreCountedExactlyOrRefused) {
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  const Constant x = int_constant(iota(10), {10});
  EXPECT_EQ(slice("t", x, {0}, {kMax}, {0}, {kMax}).i, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(slice("t", x, {kMax}, {kMin}, {0}, {-kMax}).i, (std::vector<std::int64_t>{9}));
  train::testing::expect_error([&] { slice("t", x, {0}, {1}, {0}, {kMin}); }, {"a step of"});
  // The same step along rows of 3 (one row taken), and backwards along an axis of nothing.
  EXPECT_EQ(slice("t", int_constant(iota(6), {2, 3}), {1}, {kMax}, {0}, {kMax}).i,
            (std::vector<std::int64_t>{3, 4, 5}));
  EXPECT_EQ(slice("t", int_constant({}, {2, 0}), {-1}, {kMin}, {1}, {-1}).dims,
            (std::vector<std::int64_t>{2, 0}));
  // Two values, start and start + delta: a count in doubles would round to three.
  const Constant r = range("t", int_constant({-9223372036853726068}, {}), int_constant({kMax}, {}),
                           int_constant({9223372036854250938}, {}));
  EXPECT_EQ(r.i, (std::vector<std::int64_t>{-9223372036853726068, 524870}));
  train::testing::expect_error(
      [] { range("t", int_constant({0}, {}), int_constant({kMax}, {}), int_constant({1}, {})); },
      {"more than"});
  // Nothing to hold, but strides past 64 bits.
  Constant empty = int_constant({}, {0, std::int64_t{1} << 40, std::int64_t{1} << 40});
  train::testing::expect_error([&] { transpose("t", empty, {}); }, {"more than"});
  train::testing::expect_error(
      [] { range("t", int_constant({0}, {}), floats({1.0f}, {}), int_constant({1}, {})); },
      {"an integer and a float"});
}

}  // namespace
}  // namespace telar::onnx
