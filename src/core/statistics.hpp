#pragma once
// Summary statistics of measured samples.
#include <vector>

namespace telar {

// The p-quantile (p in [0, 1]) of the samples, interpolating linearly between the two nearest
// ranks (NumPy's default method); throws telar::Error for no samples or p outside [0, 1].
double percentile(std::vector<double> samples, double p);

}  // namespace telar
