// The Reshape of a view (axis_groups.hpp) as splits of the batch-first value's axes, derived by
// hand for the shapes PyTorch's sequence-first attention writes.
#include "onnx/axis_groups.hpp"

#include <gtest/gtest.h>

namespace telar::onnx {
namespace {

constexpr SymbolicDim B{1, true};
SymbolicDim n(std::int64_t size) {
  return {size, false};
}
SymbolicDim times_b(std::int64_t size) {
  return {size, true};
}

// [B, L=5, E=8] seen as [L, B, E] (Transpose [1, 0, 2]) reshaped to [L, B*H, d] with H=2, d=4:
// E splits into [2, 4], and the batch joins the heads.
TEST(AxisGroups, TheHeadsSplitOffTheFeaturesAndJoinTheBatch) {
  const Shape dims{kBatchDim, 5, 8};
  const AxisGroups seq_first{{1}, {0}, {2}};
  EXPECT_EQ(view_dims(dims, seq_first), (std::vector<SymbolicDim>{n(5), B, n(8)}));
  const auto r = regroup(dims, seq_first, {n(5), times_b(2), n(4)});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->dims, (Shape{kBatchDim, 5, 2, 4}));
  EXPECT_EQ(r->groups, (AxisGroups{{1}, {0, 2}, {3}}));
  EXPECT_EQ(view_dims(r->dims, r->groups), (std::vector<SymbolicDim>{n(5), times_b(2), n(4)}));
}

// The context [B, H=2, L=5, d=4] seen as [L, B*H, d] reshaped to [L*B, E=8]: no axis splits;
// L and the batch form the first dimension, the heads and d the second.
TEST(AxisGroups, TheContextMergesBackWithoutASplit) {
  const Shape dims{kBatchDim, 2, 5, 4};
  const auto r = regroup(dims, {{2}, {0, 1}, {3}}, {times_b(5), n(8)});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->dims, dims);
  EXPECT_EQ(r->groups, (AxisGroups{{2, 0}, {1, 3}}));
}

// Axes of 1: a new one splits off in front of the axis it stands before, or after the last;
// leftover ones join the last dimension.
TEST(AxisGroups, AxesOfOneAreMadeAndAbsorbed) {
  auto r = regroup({kBatchDim, 6}, identity_groups(2), {B, n(1), n(6), n(1)});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->dims, (Shape{kBatchDim, 1, 6, 1}));
  EXPECT_EQ(r->groups, (AxisGroups{{0}, {1}, {2}, {3}}));
  // One token (L = 1) of [1, B, 8] as [1, B*2, 4]: the token's axis is taken, not doubled.
  r = regroup({kBatchDim, 1, 8}, {{1}, {0}, {2}}, {n(1), times_b(2), n(4)});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->dims, (Shape{kBatchDim, 1, 2, 4}));
  EXPECT_EQ(r->groups, (AxisGroups{{1}, {0, 2}, {3}}));
  r = regroup({kBatchDim, 6, 1}, identity_groups(3), {B, n(6)});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->dims, (Shape{kBatchDim, 6, 1}));
  EXPECT_EQ(r->groups, (AxisGroups{{0}, {1, 2}}));
}

// What no split gives: the batch cut or out of place, boundaries that cross (6 x 4 as 4 x 6, or
// as 2 x 3 after taking the 6), a total that differs.
TEST(AxisGroups, BoundariesNoSplitGivesAreRefused) {
  const Shape dims{kBatchDim, 6, 4};
  EXPECT_FALSE(regroup(dims, identity_groups(3), {B, n(4), n(6)}));
  EXPECT_FALSE(regroup(dims, identity_groups(3), {n(6), times_b(4)}));
  EXPECT_FALSE(regroup(dims, {{1}, {0}, {2}}, {times_b(6), n(2), n(3)}));
  EXPECT_FALSE(regroup(dims, {{1}, {2}, {0}}, {times_b(6), n(4)}));  // [6, 4, B]: 4 before B
  EXPECT_TRUE(regroup(dims, {{1}, {2}, {0}}, {n(6), times_b(4)}));
  EXPECT_FALSE(regroup(dims, identity_groups(3), {B, n(6), n(5)}));
  EXPECT_FALSE(regroup(dims, identity_groups(3), {n(24)}));
}

}  // namespace
}  // namespace telar::onnx
