#include "core/statistics.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace telar {

double percentile(std::vector<double> v, double p) {
  require(!v.empty(), "internal: the percentile of no samples");
  require(p >= 0.0 && p <= 1.0, "internal: percentile {} is outside [0, 1]", p);
  std::sort(v.begin(), v.end());
  const double pos = p * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace telar
