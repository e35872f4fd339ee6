#include "core/statistics.hpp"

#include <algorithm>
#include <cmath>

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

SampleSummary summarize(const std::vector<double>& samples) {
  require(!samples.empty(), "internal: the summary of no samples");
  SampleSummary s;
  s.count = samples.size();
  s.min = *std::min_element(samples.begin(), samples.end());
  s.max = *std::max_element(samples.begin(), samples.end());
  double sum = 0.0;
  for (double v : samples) sum += v;
  s.mean = sum / static_cast<double>(s.count);
  double squares = 0.0;
  for (double v : samples) squares += (v - s.mean) * (v - s.mean);
  s.stddev = s.count > 1 ? std::sqrt(squares / static_cast<double>(s.count - 1)) : 0.0;
  s.cv = s.mean != 0.0 ? s.stddev / s.mean : 0.0;
  s.median = percentile(samples, 0.5);
  s.p90 = percentile(samples, 0.9);
  s.p95 = percentile(samples, 0.95);
  s.p99 = percentile(samples, 0.99);
  return s;
}

}  // namespace telar
