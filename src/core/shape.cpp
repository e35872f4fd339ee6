#include "core/shape.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace telar {

std::int64_t shape_numel(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape)
    if (__builtin_mul_overflow(n, d, &n))  // (not require(): its message would be built each call)
      fail("a tensor of shape {} has more elements than a 64-bit count holds", shape_str(shape));
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

std::optional<Shape> broadcast_shape(const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t k = 0; k < rank; ++k) {
    const std::int64_t da = k < rank - a.size() ? 1 : a[k - (rank - a.size())];
    const std::int64_t db = k < rank - b.size() ? 1 : b[k - (rank - b.size())];
    if (da == db || db == 1)
      out[k] = da;
    else if (da == 1)
      out[k] = db;
    else
      return std::nullopt;
  }
  return out;
}

Shape bind_batch(const Shape& shape, std::int64_t batch) {
  Shape out = shape;
  for (auto& d : out)
    if (d == kBatchDim) d = batch;
  return out;
}

}  // namespace telar
