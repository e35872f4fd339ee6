#include "dlrm/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace telar::dlrm {

std::int64_t count_correct(const float* p, const float* t, std::int64_t n) {
  std::int64_t correct = 0;
  for (std::int64_t i = 0; i < n; ++i) correct += std::nearbyint(p[i]) == t[i] ? 1 : 0;
  return correct;
}

double roc_auc(const std::vector<float>& scores, const std::vector<float>& labels) {
  const std::size_t n = scores.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return scores[a] < scores[b]; });
  // Mann-Whitney U: sum of the positives' (average) ranks.
  double rank_sum = 0.0, positives = 0.0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && scores[order[j]] == scores[order[i]]) ++j;
    const double avg_rank = (static_cast<double>(i) + static_cast<double>(j) + 1.0) / 2.0;
    for (std::size_t k = i; k < j; ++k)
      if (labels[order[k]] > 0.5f) {
        rank_sum += avg_rank;
        positives += 1.0;
      }
    i = j;
  }
  const double negatives = static_cast<double>(n) - positives;
  if (positives == 0.0 || negatives == 0.0) return std::numeric_limits<double>::quiet_NaN();
  return (rank_sum - positives * (positives + 1.0) / 2.0) / (positives * negatives);
}

}  // namespace telar::dlrm
