#pragma once
// How a value is stored in 8 bits after post-training quantization: the range calibration saw
// it take, and the encoding derived from it; and the per-output-channel scales of int8 weights.
// The cpu backend's int8 kernels (backend/quantization.hpp) and the ONNX export of a quantized
// model (QuantizeLinear/DequantizeLinear) use the same encodings.
#include <cstdint>

namespace telar::graph {

struct ValueRange {
  float min = 0.0f;
  float max = 0.0f;
};

// Real = scale * q: unsigned (u8, 0..255) where the range has no negative part (e.g. after a
// ReLU), else symmetric signed (s8, -127..127).
struct Int8Encoding {
  bool is_unsigned = false;
  float scale = 0.0f;  // 0: the value was not calibrated (it stays fp32)
};
Int8Encoding int8_encoding(const ValueRange& range);

// Per-output-channel weight scales: max |w| over each of `channels` equal rows of `weights`
// (e.g. a convolution's [out, in, kh, kw]) divided by 127 (a zero row gets scale 1).
void weight_scales(const float* weights, std::int64_t channels, std::int64_t per_channel,
                   float* scales);

}  // namespace telar::graph
