#include "train/data/data_loader.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace telar::train {

namespace {
constexpr std::uint64_t kShuffleStream = 0x73687566666c65ULL;  // "shuffle"

std::vector<std::int64_t> all_indices(std::int64_t n) {
  std::vector<std::int64_t> indices(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
  std::iota(indices.begin(), indices.end(), std::int64_t{0});
  return indices;
}
}  // namespace

DataLoader::DataLoader(Dataset data, LoaderOptions options)
    : DataLoader(data, all_indices(data.size()), options) {}

DataLoader::DataLoader(Dataset data, std::vector<std::int64_t> indices, LoaderOptions options)
    : data_(std::move(data)), options_(options), indices_(std::move(indices)) {
  require(options_.batch_size >= 1, "batch size {} is not allowed; give --batch-size 1 or more",
          options_.batch_size);
  data_.validate();
  for (std::int64_t index : indices_)
    require(index >= 0 && index < data_.size(),
            "internal: sample index {} is outside data set '{}' of {} samples", index, data_.name,
            data_.size());
  require(!(options_.drop_last && samples() > 0 && samples() < options_.batch_size),
          "data set '{}' has {} samples, fewer than one batch of {}, and the last partial batch "
          "is dropped; lower --batch-size",
          data_.name, samples(), options_.batch_size);
  order_.resize(indices_.size());
}

std::int64_t DataLoader::samples_per_epoch() const {
  return options_.drop_last ? samples() / options_.batch_size * options_.batch_size : samples();
}

std::int64_t DataLoader::batches_per_epoch() const {
  const std::int64_t n = samples(), b = options_.batch_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

void DataLoader::check_batch_index(std::int64_t index) const {
  require(index >= 0 && index < batches_per_epoch(),
          "internal: batch {} requested from '{}', which has {} batches per epoch", index,
          data_.name, batches_per_epoch());
}

std::int64_t DataLoader::batch_size_of(std::int64_t index) const {
  check_batch_index(index);
  return std::min(options_.batch_size, samples() - index * options_.batch_size);
}

std::span<const std::int64_t> DataLoader::order(std::int64_t epoch) {
  require(epoch >= 0, "internal: epoch {} is negative", epoch);
  if (epoch != order_epoch_) {
    // Each epoch's permutation is drawn afresh from (seed, epoch), never from the previous
    // epoch's, so any epoch can be reproduced without replaying the ones before it.
    std::copy(indices_.begin(), indices_.end(), order_.begin());
    if (options_.shuffle) {
      Rng rng = Rng::derive(options_.seed ^ kShuffleStream, static_cast<std::uint64_t>(epoch));
      for (std::size_t i = order_.size(); i > 1; --i) {
        const std::size_t j = static_cast<std::size_t>(rng.below(i));
        std::swap(order_[i - 1], order_[j]);
      }
    }
    order_epoch_ = epoch;
  }
  return order_;
}

Batch& DataLoader::buffers_for(std::int64_t size) {
  Batch& buffers = size == options_.batch_size ? full_batch_ : last_batch_;
  if (buffers.size != size) {
    buffers.images = Tensor(data_.batch_shape(size), DType::F32);
    buffers.labels = Tensor({size}, DType::I64);
    buffers.size = size;
  }
  return buffers;
}

void DataLoader::fill(std::int64_t epoch, std::int64_t index, Tensor& images, Tensor& labels) {
  const std::int64_t size = batch_size_of(index);
  require(images.dtype() == DType::F32 && images.rank() >= 1 && images.dim(0) == size &&
              images.numel() == size * data_.sample_numel(),
          "internal: batch images tensor {} does not hold {} samples of {}",
          shape_str(images.shape()), size, shape_str(data_.sample_shape()));
  require(labels.dtype() == DType::I64 && labels.numel() == size,
          "internal: batch labels tensor {} does not hold {} labels", shape_str(labels.shape()),
          size);
  data_.read_batch(order(epoch).subspan(static_cast<std::size_t>(index * options_.batch_size),
                                        static_cast<std::size_t>(size)),
                   images, labels);
}

const Batch& DataLoader::batch(std::int64_t epoch, std::int64_t index) {
  Batch& out = buffers_for(batch_size_of(index));
  fill(epoch, index, out.images, out.labels);
  out.epoch = epoch;
  out.index = index;
  return out;
}

DataLoader::EpochRange DataLoader::epoch(std::int64_t epoch, std::int64_t first_batch) {
  const std::int64_t count = batches_per_epoch();
  require(first_batch >= 0 && first_batch <= count,
          "internal: epoch {} cannot start at batch {} of {}", epoch, first_batch, count);
  return {Iterator(this, epoch, first_batch), Iterator(this, epoch, count)};
}

}  // namespace telar::train
