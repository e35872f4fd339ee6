#pragma once
// A labelled classification data set held in memory: samples as f32 [N, ...] (e.g.
// [N, 1, 28, 28] scaled to [0, 1]) and class labels as i64 [N] in [0, num_classes).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace telar::train {

struct Dataset {
  std::string name;  // e.g. "fashion-mnist/train"; used in messages and run.json
  Tensor images;     // f32 [N, ...]
  Tensor labels;     // i64 [N]
  std::int64_t num_classes = 0;

  std::int64_t size() const { return images.defined() ? images.dim(0) : 0; }
  // The shape of one sample, without the leading N (e.g. {1, 28, 28}).
  Shape sample_shape() const;
  std::int64_t sample_numel() const;

  // Checks the invariants above (dtypes, matching counts, labels in range); throws
  // telar::Error naming the data set and the first offending label.
  void validate() const;
};

// A new data set holding copies of the given samples, in the given order. Indices must be in
// [0, data.size()).
Dataset subset(const Dataset& data, std::span<const std::int64_t> indices, std::string name);

// Number of samples of each class (length num_classes).
std::vector<std::int64_t> class_counts(const Dataset& data);

}  // namespace telar::train
