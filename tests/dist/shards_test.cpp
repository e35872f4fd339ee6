// Sharding: every worker takes the same number of steps; interleaved shards are exactly the
// single-worker batches, split; contiguous shards are disjoint blocks covering the data.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "dist/balance.hpp"
#include "dist/shards.hpp"
#include "train/data/synthetic.hpp"

using namespace telar;
using telar::dist::ShardedEvalSource;
using telar::dist::ShardedTrainSource;
using telar::dist::ShardMode;

namespace {

// A data set whose sample i holds the value i (so batches can be traced to rows).
train::Dataset numbered(std::int64_t n) {
  train::Dataset d;
  d.name = "numbered";
  d.images = Tensor({n, 1});
  d.labels = Tensor({n}, DType::I64);
  d.num_classes = 2;
  for (std::int64_t i = 0; i < n; ++i) {
    d.images.f32()[i] = static_cast<float>(i);
    d.labels.data<std::int64_t>()[i] = i % 2;
  }
  return d;
}

std::vector<std::int64_t> rows(const train::Batch& b) {
  std::vector<std::int64_t> r;
  for (std::int64_t i = 0; i < b.size; ++i) r.push_back(static_cast<std::int64_t>(b.images.f32()[i]));
  return r;
}

std::vector<std::int64_t> range(std::int64_t n) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
  return v;
}

}  // namespace

TEST(Shards, InterleavedSplitsTheSingleWorkerBatches) {
  const auto data = numbered(23);
  const std::vector<double> shares = {0.7, 0.3};
  train::DataLoader single(data, range(23), {10, true, false, 5});
  ShardedTrainSource w0(data, range(23), 10, ShardMode::Interleaved, 5, 0, shares);
  ShardedTrainSource w1(data, range(23), 10, ShardMode::Interleaved, 5, 1, shares);
  ASSERT_EQ(w0.batches_per_epoch(), 3);
  ASSERT_EQ(w1.batches_per_epoch(), 3);
  for (std::int64_t epoch : {0, 1}) {
    for (std::int64_t s = 0; s < 3; ++s) {
      std::vector<std::int64_t> joined = rows(w0.batch(epoch, s));
      const auto second = rows(w1.batch(epoch, s));
      joined.insert(joined.end(), second.begin(), second.end());
      EXPECT_EQ(joined, rows(single.batch(epoch, s))) << "epoch " << epoch << " step " << s;
    }
  }
  // Sizes: 7/3, 7/3, and the last global batch of 3 splits 2/1.
  EXPECT_EQ(w0.local_size(0), 7);
  EXPECT_EQ(w1.local_size(0), 3);
  EXPECT_EQ(w0.local_size(2), 2);
  EXPECT_EQ(w1.local_size(2), 1);
}

TEST(Shards, ContiguousBlocksAreDisjointAndCoverTheData) {
  const auto data = numbered(50);
  const std::vector<double> shares = {0.5, 0.25, 0.25};
  std::vector<std::int64_t> seen;
  std::vector<std::set<std::int64_t>> per_worker(3);
  for (int r = 0; r < 3; ++r) {
    ShardedTrainSource w(data, range(50), 8, ShardMode::Contiguous, 1, r, shares);
    EXPECT_EQ(w.batches_per_epoch(), 7);  // ceil(50 / 8) for every worker
    for (std::int64_t s = 0; s < 7; ++s)
      for (std::int64_t row : rows(w.batch(0, s))) {
        seen.push_back(row);
        per_worker[static_cast<std::size_t>(r)].insert(row);
      }
    // The block is contiguous in data order.
    const auto& blk = per_worker[static_cast<std::size_t>(r)];
    EXPECT_EQ(*blk.rbegin() - *blk.begin() + 1, static_cast<std::int64_t>(blk.size()));
    // Epochs reshuffle within the block: the same rows, another order.
    std::vector<std::int64_t> e0, e1;
    for (std::int64_t s = 0; s < 7; ++s) {
      const auto a = rows(w.batch(0, s));
      e0.insert(e0.end(), a.begin(), a.end());
    }
    for (std::int64_t s = 0; s < 7; ++s) {
      const auto b = rows(w.batch(1, s));
      e1.insert(e1.end(), b.begin(), b.end());
    }
    EXPECT_NE(e0, e1);
    std::sort(e0.begin(), e0.end());
    std::sort(e1.begin(), e1.end());
    EXPECT_EQ(e0, e1);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, range(50));
}

TEST(Shards, AWorkerWithNoShareGetsEmptyBatchesButTheSameStepCount) {
  const auto data = numbered(9);
  ShardedTrainSource w(data, range(9), 4, ShardMode::Interleaved, 0, 1, {0.9, 0.1});
  ASSERT_EQ(w.batches_per_epoch(), 3);
  EXPECT_EQ(w.batch(0, 2).size, 0);  // the last global batch has one sample: worker 0's
  EXPECT_EQ(w.batch(0, 2).images.dim(0), 0);
}

TEST(Shards, EvaluationPartsFollowTheShares) {
  const auto data = numbered(10);
  ShardedEvalSource a(data, range(10), 3, 0, {0.8, 0.2});
  ShardedEvalSource b(data, range(10), 3, 1, {0.8, 0.2});
  EXPECT_EQ(a.local_samples(), 8);
  EXPECT_EQ(b.local_samples(), 2);
  EXPECT_EQ(rows(b.batch(0, 0)), (std::vector<std::int64_t>{8, 9}));
  b.set_shares({1.0, 0.0});
  EXPECT_EQ(b.batches_per_epoch(), 0);
}
