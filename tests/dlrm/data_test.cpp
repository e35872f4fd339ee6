// The input generators: the reference's random semantics (dlrm_data_pytorch.py), batch plans
// from --data-size / --num-batches, determinism, and the synthetic click rule.
#include "dlrm/data.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

using namespace telar;
using namespace telar::dlrm;

namespace {
std::vector<std::int64_t> bag(const DlrmBatch& b, std::int64_t t, std::int64_t i) {
  const CsrBags c = b.bags(t);
  return {c.indices + c.begin(i), c.indices + c.end(i)};
}
}  // namespace

TEST(DlrmData, BatchPlansFollowTheReference) {
  // data-size 5, mini-batch 128: one batch of 5 (the thesis' "M is 5").
  BatchPlan p = BatchPlan::from_flags(5, 0, 128);
  EXPECT_EQ(p.batches(), 1);
  EXPECT_EQ(p.size_of(0), 5);
  // 300 samples in batches of 128: 128, 128, 44.
  p = BatchPlan::from_flags(300, 0, 128);
  EXPECT_EQ(p.batches(), 3);
  EXPECT_EQ(p.size_of(2), 44);
  // --num-batches 2 overrides --data-size: 2 full batches.
  p = BatchPlan::from_flags(5, 2, 128);
  EXPECT_EQ(p.batches(), 2);
  EXPECT_EQ(p.samples, 256);
  EXPECT_THROW(BatchPlan::from_flags(0, 0, 128), Error);
  EXPECT_THROW(BatchPlan::from_flags(5, 0, 0), Error);
  EXPECT_THROW(BatchPlan::from_flags(5, -1, 4), Error);
}

TEST(DlrmData, RandomBagsHaveTheReferenceShape) {
  const DlrmConfig c = make_config(4, "1000-3", "7-4", "1", "dot", false);
  auto data = make_random_data(c, BatchPlan{400, 200}, {20, false}, 5);
  DlrmBatch b;
  data->batch(1, b);
  ASSERT_EQ(b.size(), 200);
  EXPECT_EQ(b.dense.shape(), (Shape{200, 7}));
  EXPECT_EQ(b.target.shape(), (Shape{200, 1}));
  for (float v : b.dense.span<float>()) EXPECT_TRUE(v >= 0.0f && v < 1.0f);
  for (float v : b.target.span<float>()) EXPECT_TRUE(v >= 0.0f && v < 1.0f);
  for (std::int64_t t = 0; t < 2; ++t) {
    const std::int64_t rows = c.table_rows[t];
    EXPECT_EQ(b.offsets[t].data<std::int64_t>()[0], 0);
    std::int64_t max_len = 0;
    for (std::int64_t i = 0; i < 200; ++i) {
      const auto v = bag(b, t, i);
      // L = round(max(1, r * min(rows, 20))) draws; duplicates removed: 1..min(rows, 20).
      EXPECT_GE(v.size(), 1u);
      EXPECT_LE(static_cast<std::int64_t>(v.size()), std::min<std::int64_t>(rows, 20));
      EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
      EXPECT_EQ(std::adjacent_find(v.begin(), v.end()), v.end());  // unique
      for (auto r : v) EXPECT_TRUE(r >= 0 && r < rows);
      max_len = std::max<std::int64_t>(max_len, static_cast<std::int64_t>(v.size()));
    }
    if (t == 1) {
      EXPECT_LE(max_len, 3);  // a 3-row table never gets more than 3
    }
  }
}

TEST(DlrmData, MeanLookupsMatchTheReferenceDistribution) {
  // L = round(max(1, r * 100)), r ~ U[0,1): E[L] = 50.0 (spec §3.2 gives ~50.0 for 100);
  // with 10^7 rows duplicates are negligible. 4000 bags: standard error ~0.46.
  const DlrmConfig c = make_config(4, "10000000", "3-4", "1", "dot", false);
  auto data = make_random_data(c, BatchPlan{4000, 4000}, {100, false}, 1);
  DlrmBatch b;
  data->batch(0, b);
  const double mean = static_cast<double>(b.indices[0].numel()) / 4000.0;
  EXPECT_NEAR(mean, 50.0, 2.0);
  // Fixed: exactly 100 draws per bag, so at most 100 and nearly always 100.
  auto fixed = make_random_data(c, BatchPlan{500, 500}, {100, true}, 1);
  fixed->batch(0, b);
  EXPECT_GT(b.indices[0].numel(), 500 * 100 - 10);
  EXPECT_LE(b.indices[0].numel(), 500 * 100);
}

TEST(DlrmData, SameSeedSameBatchesInAnyOrder) {
  const DlrmConfig c = make_config(4, "50-60", "3-4", "1", "dot", false);
  auto a = make_random_data(c, BatchPlan{30, 10}, {5, false}, 7);
  auto b = make_random_data(c, BatchPlan{30, 10}, {5, false}, 7);
  auto other = make_random_data(c, BatchPlan{30, 10}, {5, false}, 8);
  DlrmBatch x, y, z;
  a->batch(2, x);
  b->batch(0, y);
  b->batch(2, y);  // after another batch: batch 2 is still batch 2
  other->batch(2, z);
  for (std::int64_t i = 0; i < x.dense.numel(); ++i) EXPECT_EQ(x.dense.f32()[i], y.dense.f32()[i]);
  ASSERT_EQ(x.indices[1].numel(), y.indices[1].numel());
  for (std::int64_t i = 0; i < x.indices[1].numel(); ++i)
    EXPECT_EQ(x.indices[1].data<std::int64_t>()[i], y.indices[1].data<std::int64_t>()[i]);
  EXPECT_NE(x.dense.f32()[0], z.dense.f32()[0]);
}

TEST(DlrmData, RoundTargetsAreClicks) {
  const DlrmConfig c = make_config(4, "50", "3-4", "1", "dot", false);
  auto data = make_random_data(c, BatchPlan{100, 100}, {5, false}, 7, true);
  DlrmBatch b;
  data->batch(0, b);
  for (float v : b.target.span<float>()) EXPECT_TRUE(v == 0.0f || v == 1.0f);
  EXPECT_TRUE(data->binary_targets());
}

TEST(DlrmData, SyntheticLabelsFollowTheHiddenRule) {
  // Labels are Bernoulli(p) with p from the hidden rule: over many samples, the mean label of
  // the samples with p > 0.5 must be well above that of those with p < 0.5, and the mean
  // label must match the mean probability.
  const DlrmConfig c = make_config(4, "200-200", "4-4", "1", "dot", false);
  auto data = make_synthetic_data(c, BatchPlan{4000, 4000}, {3, false}, 11, 0);
  DlrmBatch b;
  data->batch(0, b);
  double high_sum = 0, high_n = 0, low_sum = 0, low_n = 0, p_sum = 0, y_sum = 0;
  for (std::int64_t i = 0; i < b.size(); ++i) {
    const double p =
        synthetic_click_probability(c, 11, b.dense.f32() + i * 4, {bag(b, 0, i), bag(b, 1, i)});
    const double y = b.target.f32()[i];
    EXPECT_TRUE(y == 0.0 || y == 1.0);
    (p > 0.5 ? high_sum : low_sum) += y;
    (p > 0.5 ? high_n : low_n) += 1;
    p_sum += p;
    y_sum += y;
  }
  EXPECT_GT(high_sum / high_n, low_sum / low_n + 0.4);
  EXPECT_NEAR(y_sum / 4000.0, p_sum / 4000.0, 0.03);
  // Test and training streams differ.
  auto test = make_synthetic_data(c, BatchPlan{4000, 4000}, {3, false}, 11, 1);
  DlrmBatch t;
  test->batch(0, t);
  EXPECT_NE(t.dense.f32()[0], b.dense.f32()[0]);
}
