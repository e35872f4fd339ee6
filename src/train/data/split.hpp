#pragma once
// Train/validation split of a data set's sample indices, deterministic by seed.
#include <cstdint>
#include <string_view>
#include <vector>

namespace telar::train {

// How many samples to hold out: a fraction of the data set in [0, 1), or a count.
struct ValidationSize {
  double fraction = 0.0;
  std::int64_t count = -1;  // >= 0: a count, used instead of the fraction

  static ValidationSize of_fraction(double f) { return {f, -1}; }
  static ValidationSize of_count(std::int64_t n) { return {0.0, n}; }
  // "0.1" (a fraction: written with a decimal point) or "5000" (a whole count); `what` names
  // the option in errors.
  static ValidationSize parse(std::string_view text, std::string_view what = "--validation");
  // The number of samples held out of `dataset_size`; throws telar::Error if it leaves no
  // training samples or is out of range.
  std::int64_t resolve(std::int64_t dataset_size) const;
};

struct SplitIndices {
  std::vector<std::int64_t> train;       // ascending
  std::vector<std::int64_t> validation;  // ascending
};

// A seeded permutation of [0, dataset_size): its first `resolve(dataset_size)` entries are the
// validation samples, the rest the training samples. Each part is returned sorted, so the
// split is a pure function of (dataset_size, size, seed).
SplitIndices split_train_validation(std::int64_t dataset_size, ValidationSize size,
                                    std::uint64_t seed);

}  // namespace telar::train
