#pragma once
// DataLoader: batches over a Dataset (or a subset of its samples) in an order that is a pure
// function of (seed, epoch), so a resumed run replays any epoch exactly and can start in the
// middle of one: batch `index` of epoch `epoch` is addressable directly.
//
// Batches are gathered into tensors the loader allocates once per batch size (at most two:
// the full size and a smaller last batch) and reuses, so the steady state allocates nothing
// and a backend that plans memory per batch size sees the same input buffers every step.
#include <cstdint>
#include <span>
#include <vector>

#include "train/data/batch_source.hpp"
#include "train/data/dataset.hpp"

namespace telar::train {

struct LoaderOptions {
  std::int64_t batch_size = 32;
  bool shuffle = true;     // false: the samples in index order (evaluation)
  bool drop_last = false;  // true: skip a last batch smaller than batch_size
  std::uint64_t seed = 0;
};

class DataLoader : public BatchSource {
 public:
  // Over every sample of `data` (a cheap copy: tensors share storage).
  DataLoader(Dataset data, LoaderOptions options);
  // Over the samples `indices` of `data` (e.g. the train part of split_train_validation).
  DataLoader(Dataset data, std::vector<std::int64_t> indices, LoaderOptions options);

  const Dataset& dataset() const { return data_; }
  const LoaderOptions& options() const { return options_; }
  std::int64_t batch_size() const { return options_.batch_size; }
  // Samples this loader draws from (the subset size), and those served per epoch.
  std::int64_t samples() const { return static_cast<std::int64_t>(indices_.size()); }
  std::int64_t samples_per_epoch() const;
  std::int64_t batches_per_epoch() const override;
  // Number of samples in batch `index` (the last one may be smaller unless drop_last).
  std::int64_t batch_size_of(std::int64_t index) const;

  // Dataset row indices of `epoch` in the order they are served. Valid until the order of
  // another epoch is requested.
  std::span<const std::int64_t> order(std::int64_t epoch);

  // Gathers batch `index` of `epoch` into the loader's buffers for its size and returns them.
  // The returned tensors are the same storage for every batch of that size: their contents
  // change on the next call that yields a batch of the same size.
  const Batch& batch(std::int64_t epoch, std::int64_t index) override;
  const std::string& source_name() const override { return data_.name; }

  // Gathers batch `index` of `epoch` into caller-owned tensors: images f32 [n, ...sample
  // shape] and labels i64 [n] where n = batch_size_of(index).
  void fill(std::int64_t epoch, std::int64_t index, Tensor& images, Tensor& labels);

  // Iteration over the batches of one epoch, starting at `first_batch` (a resumed run):
  //   for (const Batch& b : loader.epoch(e, resume_batch)) { ... }
  class Iterator {
   public:
    Iterator(DataLoader* loader, std::int64_t epoch, std::int64_t index)
        : loader_(loader), epoch_(epoch), index_(index) {}
    const Batch& operator*() const { return loader_->batch(epoch_, index_); }
    Iterator& operator++() {
      ++index_;
      return *this;
    }
    bool operator!=(const Iterator& other) const { return index_ != other.index_; }

   private:
    DataLoader* loader_;
    std::int64_t epoch_, index_;
  };
  struct EpochRange {
    Iterator first, last;
    Iterator begin() const { return first; }
    Iterator end() const { return last; }
  };
  EpochRange epoch(std::int64_t epoch, std::int64_t first_batch = 0);

 private:
  void check_batch_index(std::int64_t index) const;
  Batch& buffers_for(std::int64_t size);

  Dataset data_;
  LoaderOptions options_;
  std::vector<std::int64_t> indices_;  // the samples drawn from, in ascending given order
  std::vector<std::int64_t> order_;    // indices_ permuted for order_epoch_
  std::int64_t order_epoch_ = -1;
  Batch full_batch_;
  Batch last_batch_;  // only when the last batch is smaller
};

}  // namespace telar::train
