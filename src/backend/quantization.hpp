#pragma once
// Post-training static quantization (Precision::INT8): the range each activation of a model
// compiled for inference took on calibration data, by value name, and the int8 encoding of a
// value derived from it. backend/calibration.hpp measures the ranges; the cpu backend's int8
// kernels read them (docs/quantize.md).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace telar::backend {

// How a value's range is taken from what calibration saw: its minimum and maximum, or the
// `percentile` of its magnitudes (clipping the rare outliers that would coarsen every step).
enum class CalibrationMethod : std::uint8_t { MinMax, Percentile };
std::string_view calibration_method_name(CalibrationMethod method);  // "minmax", "percentile"
// Parses "minmax" or "percentile"; throws telar::Error naming the choices.
CalibrationMethod parse_calibration_method(std::string_view text, std::string_view what);

struct ValueRange {
  float min = 0.0f;
  float max = 0.0f;
};

struct QuantizationTable {
  CalibrationMethod method = CalibrationMethod::MinMax;
  double percentile = 99.99;  // Percentile: the share (%) of magnitudes inside the range
  std::map<std::string, ValueRange> ranges;  // by value name in the inference-compiled graph
};

// A value stored as 8-bit integers, real = scale * q: unsigned (u8, 0..255) where its range
// has no negative part (e.g. after a ReLU), else symmetric signed (s8, -127..127).
struct Int8Encoding {
  bool is_unsigned = false;
  float scale = 0.0f;  // 0: the value was not calibrated (it stays fp32)
};
Int8Encoding int8_encoding(const ValueRange& range);

// Per-output-channel weight scales: max |w| over each of `channels` equal rows of `weights`
// (e.g. a convolution's [out, in, kh, kw]) divided by 127 (a zero row gets scale 1).
void weight_scales(const float* weights, std::int64_t channels, std::int64_t per_channel,
                   float* scales);

}  // namespace telar::backend
