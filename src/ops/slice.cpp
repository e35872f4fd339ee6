// Slice of one axis: per index of the axes before it, count runs of `inner` elements are copied
// (inner: the elements of the axes after it), `step` apart; with step 1 they make one run.
#include <cstdint>
#include <cstring>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

struct Runs {
  std::int64_t outer = 1, axis = 0, inner = 1;
};

Runs runs(std::string_view kernel, const SliceAttrs& a, const Tensor& whole, const Tensor& part) {
  if (a.axis < 0 || a.axis >= whole.rank() || a.start < 0 ||
      a.end > whole.dim(static_cast<int>(a.axis)) || a.start >= a.end || a.step.every < 1)
    fail("internal: {}: [{}, {}) step {} of axis {} of {}", kernel, a.start, a.end, a.step.every,
         a.axis, shape_str(whole.shape()));
  Shape expected = whole.shape();
  expected[static_cast<std::size_t>(a.axis)] = a.count();
  detail::expect_shape(kernel, "slice", part, expected);
  Runs r;
  r.axis = whole.dim(static_cast<int>(a.axis));
  for (int k = 0; k < a.axis; ++k) r.outer *= whole.dim(k);
  for (int k = static_cast<int>(a.axis) + 1; k < whole.rank(); ++k) r.inner *= whole.dim(k);
  return r;
}

// Calls copy(whole_offset, part_offset, elements) for every run the slice takes, in elements;
// the outer indices split over the threads where the part holds more than 1 MB (each writes
// its own elements of the part and reads, or in the backward writes, its own of the whole).
template <typename Copy>
void each_run(const SliceAttrs& a, const Runs& r, std::size_t part_bytes, Copy copy) {
  const std::int64_t count = a.count();
  parallel_for(0, r.outer, part_bytes > (1 << 20), [&](std::int64_t o) {
    if (!a.step.any()) {  // consecutive: one run per outer index
      copy((o * r.axis + a.start) * r.inner, o * count * r.inner, count * r.inner);
      return;
    }
    for (std::int64_t j = 0; j < count; ++j)
      copy((o * r.axis + a.start + j * a.step.every) * r.inner, (o * count + j) * r.inner, r.inner);
  });
}

}  // namespace

void slice_forward(const SliceAttrs& a, const Tensor& x, Tensor& y) {
  const Runs r = runs("slice_forward", a, x, y);
  const std::size_t size = dtype_size(x.dtype());
  const auto* xp = static_cast<const std::byte*>(x.raw());
  auto* yp = static_cast<std::byte*>(y.raw());
  each_run(a, r, y.nbytes(), [&](std::int64_t whole, std::int64_t part, std::int64_t n) {
    std::memcpy(yp + part * size, xp + whole * size, n * size);
  });
}

void slice_backward(const SliceAttrs& a, const Tensor& dy, Tensor& dx) {
  const Runs r = runs("slice_backward", a, dx, dy);
  dx.zero();
  const float* gp = dy.f32();
  float* dp = dx.f32();
  each_run(a, r, dy.nbytes(), [&](std::int64_t whole, std::int64_t part, std::int64_t n) {
    std::memcpy(dp + whole, gp + part, n * sizeof(float));
  });
}

}  // namespace telar::ops
