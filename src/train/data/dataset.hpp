#pragma once
// A labelled classification data set held in memory: samples as f32 [N, ...] (e.g.
// [N, 1, 28, 28] scaled to [0, 1]) and class labels as i64 [N] in [0, num_classes); samples
// may be read fitted to another shape (fit.hpp), one at a time.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "train/data/fit.hpp"

namespace telar::train {

struct Dataset {
  std::string name;  // e.g. "fashion-mnist/train"; used in messages and run.json
  Tensor images;     // f32 [N, ...]: the samples as loaded
  Tensor labels;     // i64 [N]
  std::int64_t num_classes = 0;
  // Set: every sample is read fitted to fit->to() (fit_samples).
  std::shared_ptr<const SampleFit> fit;

  std::int64_t size() const { return images.defined() ? images.dim(0) : 0; }
  // The shape of one sample as it is read, without the leading N (e.g. {1, 28, 28}).
  Shape sample_shape() const;
  std::int64_t sample_numel() const;
  // The shape of one sample as it is held in `images`.
  Shape stored_sample_shape() const;
  // Sample `index` as it is read (fitted where `fit` is set) into `out`, sample_numel() floats.
  void read_sample(std::int64_t index, float* out) const;
  // The shape of a batch of `size` samples as read: {size, ...sample_shape()}.
  Shape batch_shape(std::int64_t size) const;
  // Samples `rows`, as read, into `images` (f32 batch_shape(rows.size())) and their labels into
  // `labels` (i64 [rows.size()]); fitted samples are split across the compute threads.
  void read_batch(std::span<const std::int64_t> rows, Tensor& images, Tensor& labels) const;

  // Checks the invariants above (dtypes, matching counts, labels in range); throws
  // telar::Error naming the data set and the first offending label.
  void validate() const;
};

// A new data set holding copies of the given samples, in the given order, read as `data`'s
// are. Indices must be in [0, data.size()).
Dataset subset(const Dataset& data, std::span<const std::int64_t> indices, std::string name);

// Number of samples of each class (length num_classes).
std::vector<std::int64_t> class_counts(const Dataset& data);

}  // namespace telar::train
