#include "train/data/data_loader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <set>
#include <vector>

#include "test_support.hpp"

using namespace telar;
using namespace telar::train;
using telar::train::testing::expect_error;

namespace {

// n samples of shape [2, 3]; sample i is filled with the value i and has label i % 4, so a
// batch row tells which sample it came from.
Dataset numbered(std::int64_t n) {
  Dataset d{"numbered", Tensor({n, 2, 3}), Tensor({n}, DType::I64), 4, nullptr};
  for (std::int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < 6; ++k) d.images.f32()[i * 6 + k] = static_cast<float>(i);
    d.labels.data<std::int64_t>()[i] = i % 4;
  }
  return d;
}

// The sample ids in a batch, read back from its rows (checking each row and its label).
std::vector<std::int64_t> ids_of(const Batch& b) {
  std::vector<std::int64_t> ids;
  for (std::int64_t r = 0; r < b.size; ++r) {
    const float v = b.images.f32()[r * 6];
    for (int k = 1; k < 6; ++k) EXPECT_EQ(b.images.f32()[r * 6 + k], v);
    const auto id = static_cast<std::int64_t>(v);
    EXPECT_EQ(b.labels.data<std::int64_t>()[r], id % 4);
    ids.push_back(id);
  }
  return ids;
}

std::vector<std::int64_t> epoch_ids(DataLoader& loader, std::int64_t epoch) {
  std::vector<std::int64_t> all;
  for (const Batch& b : loader.epoch(epoch)) {
    auto ids = ids_of(b);
    all.insert(all.end(), ids.begin(), ids.end());
  }
  return all;
}

}  // namespace

TEST(DataLoader, BatchCountsWithAndWithoutDropLast) {
  DataLoader keep(numbered(10), {.batch_size = 4, .shuffle = true, .drop_last = false, .seed = 1});
  EXPECT_EQ(keep.batches_per_epoch(), 3);
  EXPECT_EQ(keep.samples_per_epoch(), 10);
  EXPECT_EQ(keep.batch_size_of(0), 4);
  EXPECT_EQ(keep.batch_size_of(2), 2);
  DataLoader drop(numbered(10), {.batch_size = 4, .shuffle = true, .drop_last = true, .seed = 1});
  EXPECT_EQ(drop.batches_per_epoch(), 2);
  EXPECT_EQ(drop.samples_per_epoch(), 8);
  DataLoader exact(numbered(12), {.batch_size = 4, .shuffle = false, .drop_last = true, .seed = 1});
  EXPECT_EQ(exact.batches_per_epoch(), 3);
}

TEST(DataLoader, EveryEpochServesEverySampleOnce) {
  DataLoader loader(numbered(23),
                    {.batch_size = 5, .shuffle = true, .drop_last = false, .seed = 7});
  for (std::int64_t epoch = 0; epoch < 3; ++epoch) {
    std::vector<std::int64_t> ids = epoch_ids(loader, epoch);
    std::sort(ids.begin(), ids.end());
    std::vector<std::int64_t> expected(23);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(ids, expected) << "epoch " << epoch;
  }
}

TEST(DataLoader, OrderIsAFunctionOfSeedAndEpoch) {
  const LoaderOptions options{.batch_size = 8, .shuffle = true, .drop_last = false, .seed = 3};
  DataLoader a(numbered(64), options);
  DataLoader b(numbered(64), options);
  const auto a0 = epoch_ids(a, 0), a1 = epoch_ids(a, 1);
  EXPECT_NE(a0, a1);  // reshuffled each epoch
  std::vector<std::int64_t> identity(64);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_NE(a0, identity);
  // A fresh loader asked for epoch 1 first (a resumed run) gets the same order, and asking for
  // an earlier epoch afterwards does not disturb anything.
  EXPECT_EQ(epoch_ids(b, 1), a1);
  EXPECT_EQ(epoch_ids(b, 0), a0);
  EXPECT_EQ(epoch_ids(a, 1), a1);
  DataLoader other_seed(numbered(64),
                        {.batch_size = 8, .shuffle = true, .drop_last = false, .seed = 4});
  EXPECT_NE(epoch_ids(other_seed, 0), a0);
}

TEST(DataLoader, ResumingMidEpochContinuesWithTheSameBatches) {
  const LoaderOptions options{.batch_size = 4, .shuffle = true, .drop_last = false, .seed = 9};
  DataLoader full(numbered(30), options);
  std::vector<std::vector<std::int64_t>> uninterrupted;
  for (const Batch& b : full.epoch(2)) uninterrupted.push_back(ids_of(b));

  DataLoader resumed(numbered(30), options);
  std::int64_t index = 3;
  for (const Batch& b : resumed.epoch(2, 3)) {
    EXPECT_EQ(b.epoch, 2);
    EXPECT_EQ(b.index, index);
    EXPECT_EQ(ids_of(b), uninterrupted[static_cast<std::size_t>(index)]);
    ++index;
  }
  EXPECT_EQ(index, resumed.batches_per_epoch());
  EXPECT_EQ(ids_of(resumed.batch(2, 5)), uninterrupted[5]);  // direct addressing
}

TEST(DataLoader, NoShuffleServesSamplesInOrder) {
  DataLoader loader(numbered(10),
                    {.batch_size = 3, .shuffle = false, .drop_last = false, .seed = 1});
  std::vector<std::int64_t> expected(10);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(epoch_ids(loader, 0), expected);
  EXPECT_EQ(epoch_ids(loader, 5), expected);
}

TEST(DataLoader, BatchBuffersAreAllocatedOncePerBatchSize) {
  DataLoader loader(numbered(10),
                    {.batch_size = 4, .shuffle = true, .drop_last = false, .seed = 1});
  const Batch& first = loader.batch(0, 0);
  const void* full_images = first.images.raw();
  const void* full_labels = first.labels.raw();
  EXPECT_EQ(first.images.shape(), (Shape{4, 2, 3}));
  const Batch& last = loader.batch(0, 2);
  EXPECT_EQ(last.images.shape(), (Shape{2, 2, 3}));
  const void* last_images = last.images.raw();
  for (std::int64_t epoch = 0; epoch < 3; ++epoch)
    for (const Batch& b : loader.epoch(epoch)) {
      EXPECT_EQ(b.images.raw(), b.size == 4 ? full_images : last_images);
      if (b.size == 4) {
        EXPECT_EQ(b.labels.raw(), full_labels);
      }
    }
}

TEST(DataLoader, FillsCallerTensors) {
  DataLoader loader(numbered(10),
                    {.batch_size = 4, .shuffle = true, .drop_last = false, .seed = 1});
  Tensor images({4, 2, 3});
  Tensor labels({4}, DType::I64);
  loader.fill(1, 1, images, labels);
  const Batch& b = loader.batch(1, 1);
  EXPECT_EQ(std::memcmp(images.raw(), b.images.raw(), images.nbytes()), 0);
  EXPECT_EQ(std::memcmp(labels.raw(), b.labels.raw(), labels.nbytes()), 0);
  Tensor wrong({3, 2, 3});
  EXPECT_THROW(loader.fill(1, 1, wrong, labels), Error);
}

TEST(DataLoader, SubsetServesOnlyItsSamples) {
  const std::vector<std::int64_t> subset = {1, 3, 5, 7, 11, 13};
  DataLoader loader(numbered(20), subset,
                    {.batch_size = 4, .shuffle = true, .drop_last = false, .seed = 2});
  EXPECT_EQ(loader.samples(), 6);
  EXPECT_EQ(loader.batches_per_epoch(), 2);
  std::vector<std::int64_t> ids = epoch_ids(loader, 0);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, subset);
}

TEST(DataLoader, BadOptionsAreClearErrors) {
  expect_error(
      [] {
        DataLoader(numbered(10), {.batch_size = 0, .shuffle = true, .drop_last = false, .seed = 0});
      },
      {"batch size 0", "--batch-size"});
  expect_error(
      [] {
        DataLoader(numbered(3), {.batch_size = 4, .shuffle = true, .drop_last = true, .seed = 0});
      },
      {"3 samples", "batch of 4", "--batch-size"});
  Dataset bad = numbered(4);
  bad.labels.data<std::int64_t>()[2] = 9;
  expect_error(
      [&] { DataLoader(bad, {.batch_size = 2, .shuffle = true, .drop_last = false, .seed = 0}); },
      {"label 9 of sample 2"});
}
