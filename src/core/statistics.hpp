#pragma once
// Summary statistics of measured samples.
#include <cstddef>
#include <vector>

namespace telar {

// The p-quantile (p in [0, 1]) of the samples, interpolating linearly between the two nearest
// ranks (NumPy's default method); throws telar::Error for no samples or p outside [0, 1].
double percentile(std::vector<double> samples, double p);

// What a benchmark reports of its timed samples. stddev is the sample standard deviation
// (n - 1; 0 for one sample), cv the coefficient of variation stddev / mean.
struct SampleSummary {
  std::size_t count = 0;
  double min = 0, mean = 0, median = 0, p90 = 0, p95 = 0, p99 = 0, max = 0, stddev = 0, cv = 0;
};
// Throws telar::Error for no samples.
SampleSummary summarize(const std::vector<double>& samples);

}  // namespace telar
