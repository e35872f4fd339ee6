// Pad: each [H, W] plane is copied into the middle of a [top+H+bottom, left+W+right] plane
// filled with the value; the backward crops that middle out of the gradient.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

void check(std::string_view kernel, const PadAttrs& a, const Tensor& small, const Tensor& big) {
  detail::expect_rank(kernel, "x", small, 4);
  detail::expect_shape(kernel, "y", big,
                       {small.dim(0), small.dim(1), a.top + small.dim(2) + a.bottom,
                        a.left + small.dim(3) + a.right});
}

}  // namespace

void pad_forward(const PadAttrs& a, const Tensor& x, Tensor& y) {
  check("pad_forward", a, x, y);
  const std::int64_t planes = x.dim(0) * x.dim(1), h = x.dim(2), w = x.dim(3);
  const std::int64_t oh = y.dim(2), ow = y.dim(3);
  const float* xp = x.f32();
  float* yp = y.f32();
  parallel_for(0, planes, y.numel() > (1 << 16), [&](std::int64_t p) {
    float* plane = yp + p * oh * ow;
    std::fill(plane, plane + oh * ow, a.value);
    for (std::int64_t r = 0; r < h; ++r)
      std::memcpy(plane + (r + a.top) * ow + a.left, xp + (p * h + r) * w, w * sizeof(float));
  });
}

void pad_backward(const PadAttrs& a, const Tensor& dy, Tensor& dx) {
  check("pad_backward", a, dx, dy);
  const std::int64_t planes = dx.dim(0) * dx.dim(1), h = dx.dim(2), w = dx.dim(3);
  const std::int64_t oh = dy.dim(2), ow = dy.dim(3);
  const float* gp = dy.f32();
  float* dp = dx.f32();
  parallel_for(0, planes, dy.numel() > (1 << 16), [&](std::int64_t p) {
    for (std::int64_t r = 0; r < h; ++r)
      std::memcpy(dp + (p * h + r) * w, gp + (p * oh + r + a.top) * ow + a.left, w * sizeof(float));
  });
}

}  // namespace telar::ops
