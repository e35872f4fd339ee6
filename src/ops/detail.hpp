#pragma once
// Private helpers shared by the reference kernels (not part of the ops contract).
#include <algorithm>
#include <cstdint>
#include <string_view>

#include "core/error.hpp"
#include "core/tensor.hpp"

namespace telar::ops::detail {

// Cheap shape agreement check: shapes are guaranteed by shape inference, so a mismatch here is
// a bug in the caller, reported as an internal error naming the kernel.
inline void expect_shape(std::string_view kernel, std::string_view what, const Tensor& t,
                         const Shape& expected) {
  if (t.shape() != expected)
    fail("internal: {}: {} has shape {}, expected {}", kernel, what, shape_str(t.shape()),
         shape_str(expected));
}

// The same for a brace list ({batch, dim}) without building a Shape (no allocation when the
// shapes agree: kernels run in the steady-state training step).
inline void expect_shape(std::string_view kernel, std::string_view what, const Tensor& t,
                         std::initializer_list<std::int64_t> expected) {
  if (!std::equal(t.shape().begin(), t.shape().end(), expected.begin(), expected.end()))
    expect_shape(kernel, what, t, Shape(expected));
}

inline void expect_same_numel(std::string_view kernel, std::string_view what, const Tensor& t,
                              std::int64_t expected) {
  if (t.numel() != expected)
    fail("internal: {}: {} has {} elements ({}), expected {}", kernel, what, t.numel(),
         shape_str(t.shape()), expected);
}

inline void expect_rank(std::string_view kernel, std::string_view what, const Tensor& t, int rank) {
  if (t.rank() != rank)
    fail("internal: {}: {} has shape {}, expected rank {}", kernel, what, shape_str(t.shape()),
         rank);
}

// Output positions o in [0, out) whose input coordinate o * stride + offset lies in [0, in):
// the half-open range [lo, hi) (empty when lo >= hi). Lets window loops skip padding without a
// per-element branch.
struct Range {
  std::int64_t lo = 0, hi = 0;
};
inline Range valid_outputs(std::int64_t in, std::int64_t out, std::int64_t stride,
                           std::int64_t offset) {
  Range r;
  r.lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  const std::int64_t last_in = in - 1 - offset;  // o * stride <= last_in
  r.hi = last_in < 0 ? 0 : std::min(out, last_in / stride + 1);
  r.lo = std::min(r.lo, out);
  if (r.hi < r.lo) r.hi = r.lo;
  return r;
}

}  // namespace telar::ops::detail
