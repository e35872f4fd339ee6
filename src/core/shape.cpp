#include "core/shape.hpp"

#include <fmt/format.h>

namespace telar {

std::int64_t shape_numel(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    if (shape[i] == kBatchDim) out += "B";
    else if (shape[i] == kDynamicDim) out += "?";
    else out += fmt::format("{}", shape[i]);
  }
  return out + "]";
}

bool shape_is_concrete(const Shape& shape) {
  for (auto d : shape)
    if (d < 0) return false;
  return true;
}

Shape bind_batch(const Shape& shape, std::int64_t batch) {
  Shape out = shape;
  for (auto& d : out)
    if (d == kBatchDim) d = batch;
  return out;
}

}  // namespace telar
