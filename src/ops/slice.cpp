// Slice of one axis: per index of the axes before it, a contiguous run of (end - start) * inner
// elements is copied (inner: the elements of the axes after it).
#include <cstdint>
#include <cstring>

#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

struct Runs {
  std::int64_t outer = 1, axis = 0, inner = 1;
};

Runs runs(std::string_view kernel, const SliceAttrs& a, const Tensor& whole, const Tensor& part) {
  if (a.axis < 0 || a.axis >= whole.rank() || a.start < 0 || a.end > whole.dim(static_cast<int>(a.axis)) ||
      a.start >= a.end)
    fail("internal: {}: [{}, {}) of axis {} of {}", kernel, a.start, a.end, a.axis,
         shape_str(whole.shape()));
  Shape expected = whole.shape();
  expected[static_cast<std::size_t>(a.axis)] = a.end - a.start;
  detail::expect_shape(kernel, "slice", part, expected);
  Runs r;
  r.axis = whole.dim(static_cast<int>(a.axis));
  for (int k = 0; k < a.axis; ++k) r.outer *= whole.dim(k);
  for (int k = static_cast<int>(a.axis) + 1; k < whole.rank(); ++k) r.inner *= whole.dim(k);
  return r;
}

}  // namespace

void slice_forward(const SliceAttrs& a, const Tensor& x, Tensor& y) {
  const Runs r = runs("slice_forward", a, x, y);
  const std::size_t size = dtype_size(x.dtype());
  const std::int64_t run = (a.end - a.start) * r.inner;
  const auto* xp = static_cast<const std::byte*>(x.raw());
  auto* yp = static_cast<std::byte*>(y.raw());
  for (std::int64_t o = 0; o < r.outer; ++o)
    std::memcpy(yp + o * run * size, xp + (o * r.axis + a.start) * r.inner * size, run * size);
}

void slice_backward(const SliceAttrs& a, const Tensor& dy, Tensor& dx) {
  const Runs r = runs("slice_backward", a, dx, dy);
  dx.zero();
  const std::int64_t run = (a.end - a.start) * r.inner;
  const float* gp = dy.f32();
  float* dp = dx.f32();
  for (std::int64_t o = 0; o < r.outer; ++o)
    std::memcpy(dp + (o * r.axis + a.start) * r.inner, gp + o * run, run * sizeof(float));
}

}  // namespace telar::ops
