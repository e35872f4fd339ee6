#pragma once
// Post-training static quantization (Precision::INT8): the range each activation of a model
// compiled for inference took on calibration data, by value name (graph/int8_encoding.hpp: the
// int8 encoding of a value derived from it). backend/calibration.hpp measures the ranges; the cpu
// backend's int8 kernels read them (docs/quantize.md).
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "graph/int8_encoding.hpp"

namespace telar::backend {

// How a value's range is taken from what calibration saw: its minimum and maximum, or the
// `percentile` of its magnitudes (clipping the rare outliers that would coarsen every step).
enum class CalibrationMethod : std::uint8_t { MinMax, Percentile };
std::string_view calibration_method_name(CalibrationMethod method);  // "minmax", "percentile"
// Parses "minmax" or "percentile"; throws telar::Error naming the choices.
CalibrationMethod parse_calibration_method(std::string_view text, std::string_view what);

using graph::int8_encoding;
using graph::Int8Encoding;
using graph::ValueRange;
using graph::weight_scales;

struct QuantizationTable {
  CalibrationMethod method = CalibrationMethod::MinMax;
  double percentile = 99.99;  // Percentile: the share (%) of magnitudes inside the range
  std::map<std::string, ValueRange> ranges;  // by value name in the inference-compiled graph
  // Nodes of that graph kept in fp32 (mixed precision: layers whose quantization costs
  // accuracy), by name.
  std::set<std::string> excluded;
};

}  // namespace telar::backend
