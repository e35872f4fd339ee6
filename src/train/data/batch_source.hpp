#pragma once
// Where a Trainer gets its batches: addressable by (epoch, index) so that a resumed run can
// start in the middle of an epoch. DataLoader is the usual one; a data-parallel worker (dist/)
// serves its part of each global batch, which may be empty (the worker still takes part in
// the step, with weight zero).
#include <cstdint>
#include <string>

#include "core/tensor.hpp"

namespace telar::train {

struct Batch {
  Tensor images;  // f32 [size, ...sample shape]
  Tensor labels;  // i64 [size]
  std::int64_t size = 0;
  std::int64_t epoch = -1;
  std::int64_t index = -1;  // position within the epoch
};

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  virtual std::int64_t batches_per_epoch() const = 0;
  // Batch `index` of `epoch`; valid until the next call.
  virtual const Batch& batch(std::int64_t epoch, std::int64_t index) = 0;
  // The data set's name, for messages.
  virtual const std::string& source_name() const = 0;
};

}  // namespace telar::train
