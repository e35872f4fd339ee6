#include "train/data/split.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/error.hpp"
#include "core/parse.hpp"
#include "core/rng.hpp"

namespace telar::train {

namespace {
constexpr std::uint64_t kSplitStream = 0x73706c6974ULL;  // "split"
}

ValidationSize ValidationSize::parse(std::string_view text, std::string_view what) {
  const std::string_view value = trim(text);
  if (value.find_first_of(".eE") != std::string_view::npos) {
    const double f = parse_double(value, what);
    require(f >= 0.0 && f < 1.0,
            "{}: fraction {} is outside [0, 1); give a fraction like 0.1 or a sample count", what,
            f);
    return of_fraction(f);
  }
  std::int64_t n = 0;
  try {
    n = parse_int(value, what);
  } catch (const Error&) {
    fail("{} '{}' is neither a fraction (0.1) nor a sample count (5000)", what, text);
  }
  require(n >= 0, "{}: {} samples is negative; give a fraction like 0.1 or a sample count", what,
          n);
  return of_count(n);
}

std::int64_t ValidationSize::resolve(std::int64_t dataset_size) const {
  std::int64_t held_out = 0;
  if (count >= 0) {
    held_out = count;
  } else {
    require(fraction >= 0.0 && fraction < 1.0,
            "validation fraction {} is outside [0, 1); give a fraction like 0.1", fraction);
    held_out =
        static_cast<std::int64_t>(std::llround(fraction * static_cast<double>(dataset_size)));
  }
  require(held_out < dataset_size,
          "a validation set of {} samples leaves no training samples out of {}; hold out fewer",
          held_out, dataset_size);
  return held_out;
}

SplitIndices split_train_validation(std::int64_t dataset_size, ValidationSize size,
                                    std::uint64_t seed) {
  require(dataset_size >= 1, "cannot split an empty data set");
  const std::int64_t held_out = size.resolve(dataset_size);
  std::vector<std::int64_t> order(static_cast<std::size_t>(dataset_size));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  // Only the first `held_out` positions need to be drawn (a partial Fisher-Yates shuffle).
  Rng rng = Rng::derive(seed, kSplitStream);
  for (std::int64_t i = 0; i < held_out; ++i) {
    const auto j =
        i + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(dataset_size - i)));
    std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
  }
  SplitIndices out;
  out.validation.assign(order.begin(), order.begin() + held_out);
  out.train.assign(order.begin() + held_out, order.end());
  std::sort(out.validation.begin(), out.validation.end());
  std::sort(out.train.begin(), out.train.end());
  return out;
}

}  // namespace telar::train
