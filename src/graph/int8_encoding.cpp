#include "graph/int8_encoding.hpp"

#include <algorithm>
#include <cmath>

namespace telar::graph {

Int8Encoding int8_encoding(const ValueRange& range) {
  Int8Encoding e;
  e.is_unsigned = range.min >= 0.0f;
  const float magnitude = std::max(std::fabs(range.min), std::fabs(range.max));
  // A value that was zero throughout still needs a valid scale.
  e.scale = magnitude > 0.0f ? magnitude / (e.is_unsigned ? 255.0f : 127.0f) : 1.0f;
  return e;
}

void weight_scales(const float* weights, std::int64_t channels, std::int64_t per_channel,
                   float* scales) {
  for (std::int64_t c = 0; c < channels; ++c) {
    float m = 0.0f;
    const float* row = weights + c * per_channel;
    for (std::int64_t i = 0; i < per_channel; ++i) m = std::max(m, std::fabs(row[i]));
    scales[c] = m > 0.0f ? m / 127.0f : 1.0f;
  }
}

}  // namespace telar::graph
