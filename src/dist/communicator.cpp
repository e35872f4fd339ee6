#include "dist/communicator.hpp"

#include <algorithm>

namespace telar::dist {

double Communicator::all_reduce_weighted_mean(std::span<const std::span<float>> parts, float weight) {
  std::size_t n = 1;
  for (const auto& p : parts) n += p.size();
  packed_.resize(n);
  packed_[0] = weight;
  std::size_t offset = 1;
  for (const auto& p : parts) {
    float* dst = packed_.data() + offset;
    if (weight == 0.0f)
      std::fill_n(dst, p.size(), 0.0f);  // never read: may hold stale or non-finite values
    else
      for (std::size_t i = 0; i < p.size(); ++i) dst[i] = p[i] * weight;
    offset += p.size();
  }
  all_reduce_sum(std::span<float>(packed_));
  const float total = packed_[0];
  const float scale = total > 0.0f ? 1.0f / total : 0.0f;
  offset = 1;
  for (const auto& p : parts) {
    const float* src = packed_.data() + offset;
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = src[i] * scale;
    offset += p.size();
  }
  return total;
}

}  // namespace telar::dist
