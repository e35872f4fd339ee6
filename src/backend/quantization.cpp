#include "backend/quantization.hpp"

#include "core/error.hpp"

namespace telar::backend {

std::string_view calibration_method_name(CalibrationMethod method) {
  return method == CalibrationMethod::Percentile ? "percentile" : "minmax";
}

CalibrationMethod parse_calibration_method(std::string_view text, std::string_view what) {
  if (text == "minmax") return CalibrationMethod::MinMax;
  if (text == "percentile") return CalibrationMethod::Percentile;
  fail("{} '{}' is not a calibration method; give minmax or percentile", what, text);
}

}  // namespace telar::backend
