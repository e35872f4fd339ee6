#pragma once
// Which samples each worker trains on. An epoch is ceil(N / B) global batches of B samples
// (the last one smaller) on every worker, whatever the shares, so all workers take the same
// number of steps; global batch s has G_s samples, of which worker r takes b_r(s) =
// split_count(G_s, shares)[r] (possibly 0).
//   interleaved  the global batches are those one worker with the same seed would see (one
//                permutation of the data per epoch, from (seed, epoch)); worker r takes its
//                b_r(s) consecutive samples of global batch s. N workers then compute exactly
//                the update of one worker, whatever the shares.
//   contiguous   as the thesis: worker r owns a contiguous block of the data (in data order)
//                of sum_s b_r(s) samples, which it shuffles each epoch by (seed, epoch, r)
//                and walks b_r(s) samples at a time.
// Evaluation data is split into contiguous parts by the same shares, so every worker finishes
// its part at about the same time; the parts' sums are then added (Trainer + ReplicaGroup).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "train/data/data_loader.hpp"

namespace telar::dist {

enum class ShardMode { Interleaved, Contiguous };
ShardMode parse_shard_mode(const std::string& text);
std::string_view shard_mode_name(ShardMode mode);

class ShardedTrainSource final : public train::BatchSource {
 public:
  // `indices`: the samples of `data` to train on (all workers pass the same).
  ShardedTrainSource(train::Dataset data, std::vector<std::int64_t> indices,
                     std::int64_t global_batch, ShardMode mode, std::uint64_t seed, int rank,
                     std::vector<double> shares);
  void set_shares(std::vector<double> shares);
  const std::vector<double>& shares() const { return shares_; }

  std::int64_t batches_per_epoch() const override;
  const train::Batch& batch(std::int64_t epoch, std::int64_t index) override;
  const std::string& source_name() const override { return data_.name; }
  // This worker's number of samples in global batch `index` (every epoch).
  std::int64_t local_size(std::int64_t index) const;
  std::int64_t global_size(std::int64_t index) const;
  std::int64_t samples() const { return static_cast<std::int64_t>(indices_.size()); }

 private:
  void prepare(std::int64_t epoch);

  train::Dataset data_;
  std::vector<std::int64_t> indices_;
  std::int64_t global_batch_;
  ShardMode mode_;
  std::uint64_t seed_;
  int rank_;
  std::vector<double> shares_;
  train::DataLoader global_order_;      // the single-worker permutation of each epoch
  std::vector<std::int64_t> local_rows_;  // this worker's rows of the prepared epoch, in order
  std::vector<std::int64_t> local_first_;  // by step: first position in local_rows_
  std::int64_t prepared_epoch_ = -1;
  std::map<std::int64_t, train::Batch> buffers_;  // by size
};

class ShardedEvalSource final : public train::BatchSource {
 public:
  ShardedEvalSource(train::Dataset data, std::vector<std::int64_t> indices, std::int64_t batch,
                    int rank, std::vector<double> shares);
  void set_shares(std::vector<double> shares);
  std::int64_t batches_per_epoch() const override;
  const train::Batch& batch(std::int64_t epoch, std::int64_t index) override;
  const std::string& source_name() const override { return data_.name; }
  std::int64_t local_samples() const;

 private:
  train::Dataset data_;
  std::vector<std::int64_t> indices_;
  std::int64_t batch_;
  int rank_;
  std::unique_ptr<train::DataLoader> part_;  // null when this worker's part is empty
};

}  // namespace telar::dist
