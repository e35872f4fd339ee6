#pragma once
// How the work of each global batch is divided between workers: the shares (fractions that
// sum to 1) and the integer split of a count by them.
//   equal        every worker the same share
//   factor:F[@R] the thesis' adjustment factor: worker R (default: the last) gets 1/F of the
//                share of each other worker
//   weights:A/B/...  explicit relative weights, one per worker
//   auto         shares proportional to each worker's throughput, measured in a warm-up
//   dynamic      as auto, then re-measured during every epoch and re-balanced after it
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace telar::dist {

struct Balance {
  enum class Kind { Equal, Factor, Weights, Auto, Dynamic };
  Kind kind = Kind::Equal;
  double factor = 1.0;
  int factor_rank = -1;          // -1: the last worker
  std::vector<double> weights;   // Kind::Weights
  std::string text = "equal";

  // Throws telar::Error (one line, the accepted forms) for a malformed spec.
  static Balance parse(const std::string& text);
  bool measured() const { return kind == Kind::Auto || kind == Kind::Dynamic; }
  // The shares before any measurement, for `workers` workers (measured kinds: equal). Throws
  // when the spec does not fit the worker count.
  std::vector<double> initial_shares(int workers) const;
};

// Shares proportional to `weights` (all >= 0, not all 0).
std::vector<double> normalize_shares(std::span<const double> weights);

// After an epoch of training: a one-line warning, saying what to do, when the group trained
// clearly slower than its fastest worker would alone (the seed-002 thesis' CPU+GPU run ended
// slower than its GPU alone, and only its final figures showed it); else "".
// `alone_samples_per_s` (rank order) are a measured balance's warm-up figures: forward and
// backward without the optimizer step, 12-17% above a GPU worker's speed alone on an H100
// (docs/cuda.md). So the group is compared with kSlowerThanAloneWarning of the fastest.
inline constexpr double kSlowerThanAloneWarning = 0.75;
std::string slower_than_alone_warning(double group_samples_per_s,
                                      std::span<const double> alone_samples_per_s);

// Splits `total` into integers proportional to `shares` (largest remainder; ties to the lower
// rank): they sum to `total` and differ from total*share by less than 1.
std::vector<std::int64_t> split_count(std::int64_t total, std::span<const double> shares);

}  // namespace telar::dist
