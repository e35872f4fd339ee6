#include "dist/shards.hpp"

#include <fmt/format.h>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/parse.hpp"
#include "core/rng.hpp"
#include "dist/balance.hpp"

namespace telar::dist {

namespace {
constexpr std::uint64_t kBlockShuffleStream = 0x626c6f636bULL;  // "block"

constexpr EnumNames<ShardMode, ShardMode::Contiguous> kShardModes{{"interleaved", "contiguous"}};
}  // namespace

ShardMode parse_shard_mode(const std::string& text) {
  if (auto mode = kShardModes.find(text)) return *mode;
  const std::string near = closest_match(text, {"interleaved", "contiguous"});
  fail("--shard {}: unknown sharding{}; use {}", text,
       near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near), kShardModes.choices());
}

std::string_view shard_mode_name(ShardMode mode) {
  return kShardModes(mode);
}

ShardedTrainSource::ShardedTrainSource(train::Dataset data, std::vector<std::int64_t> indices,
                                       std::int64_t global_batch, ShardMode mode,
                                       std::uint64_t seed, int rank, std::vector<double> shares)
    : data_(data),
      indices_(indices),
      global_batch_(global_batch),
      mode_(mode),
      seed_(seed),
      rank_(rank),
      global_order_(data, indices, {global_batch, true, false, seed}) {
  require(rank >= 0 && static_cast<std::size_t>(rank) < shares.size(),
          "internal: rank {} of {} shares", rank, shares.size());
  set_shares(std::move(shares));
}

void ShardedTrainSource::set_shares(std::vector<double> shares) {
  require(shares.size() > static_cast<std::size_t>(rank_), "internal: {} shares for rank {}",
          shares.size(), rank_);
  shares_ = std::move(shares);
  prepared_epoch_ = -1;
  buffers_.clear();
}

std::int64_t ShardedTrainSource::batches_per_epoch() const {
  return (samples() + global_batch_ - 1) / global_batch_;
}

std::int64_t ShardedTrainSource::global_size(std::int64_t index) const {
  return std::min(global_batch_, samples() - index * global_batch_);
}

std::int64_t ShardedTrainSource::local_size(std::int64_t index) const {
  return split_count(global_size(index), shares_)[static_cast<std::size_t>(rank_)];
}

void ShardedTrainSource::prepare(std::int64_t epoch) {
  if (prepared_epoch_ == epoch) return;
  const std::int64_t steps = batches_per_epoch();
  local_rows_.clear();
  local_first_.assign(static_cast<std::size_t>(steps) + 1, 0);
  if (mode_ == ShardMode::Interleaved) {
    const std::span<const std::int64_t> order = global_order_.order(epoch);
    for (std::int64_t s = 0; s < steps; ++s) {
      const auto parts = split_count(global_size(s), shares_);
      std::int64_t offset = s * global_batch_;
      for (int q = 0; q < rank_; ++q) offset += parts[static_cast<std::size_t>(q)];
      local_first_[static_cast<std::size_t>(s)] = static_cast<std::int64_t>(local_rows_.size());
      for (std::int64_t i = 0; i < parts[static_cast<std::size_t>(rank_)]; ++i)
        local_rows_.push_back(order[static_cast<std::size_t>(offset + i)]);
    }
  } else {
    // Block sizes are the sums of each worker's parts over the epoch's global batches.
    std::vector<std::int64_t> block(shares_.size(), 0);
    for (std::int64_t s = 0; s < steps; ++s) {
      const auto parts = split_count(global_size(s), shares_);
      local_first_[static_cast<std::size_t>(s)] = block[static_cast<std::size_t>(rank_)];
      for (std::size_t q = 0; q < parts.size(); ++q) block[q] += parts[q];
    }
    std::int64_t start = 0;
    for (int q = 0; q < rank_; ++q) start += block[static_cast<std::size_t>(q)];
    local_rows_.assign(indices_.begin() + start,
                       indices_.begin() + start + block[static_cast<std::size_t>(rank_)]);
    Rng rng = Rng::derive(seed_ ^ kBlockShuffleStream,
                          static_cast<std::uint64_t>(epoch) * 1000003ULL + static_cast<std::uint64_t>(rank_));
    for (std::size_t i = local_rows_.size(); i > 1; --i)
      std::swap(local_rows_[i - 1], local_rows_[static_cast<std::size_t>(rng.below(i))]);
  }
  local_first_[static_cast<std::size_t>(steps)] = static_cast<std::int64_t>(local_rows_.size());
  prepared_epoch_ = epoch;
}

const train::Batch& ShardedTrainSource::batch(std::int64_t epoch, std::int64_t index) {
  require(index >= 0 && index < batches_per_epoch(),
          "internal: batch {} requested from '{}', which has {} batches per epoch", index,
          data_.name, batches_per_epoch());
  prepare(epoch);
  const std::int64_t first = local_first_[static_cast<std::size_t>(index)];
  const std::int64_t size = local_first_[static_cast<std::size_t>(index) + 1] - first;
  train::Batch& b = buffers_[size];
  if (!b.images.defined()) {
    b.images = Tensor(data_.batch_shape(size), DType::F32);
    b.labels = Tensor({size}, DType::I64);
    b.size = size;
  }
  data_.read_batch(std::span<const std::int64_t>(local_rows_)
                       .subspan(static_cast<std::size_t>(first), static_cast<std::size_t>(size)),
                   b.images, b.labels);
  b.epoch = epoch;
  b.index = index;
  return b;
}

ShardedEvalSource::ShardedEvalSource(train::Dataset data, std::vector<std::int64_t> indices,
                                     std::int64_t batch, int rank, std::vector<double> shares)
    : data_(std::move(data)), indices_(std::move(indices)), batch_(batch), rank_(rank) {
  set_shares(std::move(shares));
}

void ShardedEvalSource::set_shares(std::vector<double> shares) {
  const auto parts = split_count(static_cast<std::int64_t>(indices_.size()), shares);
  std::int64_t start = 0;
  for (int q = 0; q < rank_; ++q) start += parts[static_cast<std::size_t>(q)];
  const std::int64_t n = parts[static_cast<std::size_t>(rank_)];
  part_.reset();
  if (n > 0)
    part_ = std::make_unique<train::DataLoader>(
        data_, std::vector<std::int64_t>(indices_.begin() + start, indices_.begin() + start + n),
        train::LoaderOptions{batch_, false, false, 0});
}

std::int64_t ShardedEvalSource::batches_per_epoch() const {
  return part_ ? part_->batches_per_epoch() : 0;
}

const train::Batch& ShardedEvalSource::batch(std::int64_t epoch, std::int64_t index) {
  require(part_ != nullptr, "internal: batch requested from an empty evaluation part");
  return part_->batch(epoch, index);
}

std::int64_t ShardedEvalSource::local_samples() const { return part_ ? part_->samples() : 0; }

}  // namespace telar::dist
