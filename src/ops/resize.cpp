// Resize: each output pixel of a plane reads one input pixel (nearest) or a weighted 2x2 block
// (linear), the same for every plane, so each axis's source pixels and weights are computed once
// (Taps) and the planes run in parallel; the backward scatters within its own plane.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

// Along one axis, output pixel o reads input pixels lo[o] (weight 1 - w[o]) and hi[o] (w[o]).
struct Taps {
  std::vector<std::int64_t> lo, hi;
  std::vector<float> w;
};

// The coordinates in float, as PyTorch computes them (its CPU kernels' float arithmetic).
Taps taps(const graph::ResizeAttrs& a, std::int64_t in, std::int64_t out) {
  Taps t;
  t.lo.resize(static_cast<std::size_t>(out));
  t.hi.resize(static_cast<std::size_t>(out));
  t.w.assign(static_cast<std::size_t>(out), 0.0f);
  for (std::int64_t o = 0; o < out; ++o) {
    const auto k = static_cast<std::size_t>(o);
    if (a.mode == graph::ResizeMode::Nearest) {
      const float scale = static_cast<float>(in) / static_cast<float>(out);
      t.lo[k] = t.hi[k] =
          std::min(static_cast<std::int64_t>(std::floor(static_cast<float>(o) * scale)), in - 1);
      continue;
    }
    float s = 0.0f;
    if (a.align_corners) {
      if (out > 1)
        s = static_cast<float>(in - 1) / static_cast<float>(out - 1) * static_cast<float>(o);
    } else {
      const float scale = static_cast<float>(in) / static_cast<float>(out);
      s = std::max(scale * (static_cast<float>(o) + 0.5f) - 0.5f, 0.0f);
    }
    const auto lo = std::min(static_cast<std::int64_t>(s), in - 1);
    t.lo[k] = lo;
    t.hi[k] = std::min(lo + 1, in - 1);
    t.w[k] = s - static_cast<float>(lo);
  }
  return t;
}

void check(std::string_view kernel, const graph::ResizeAttrs& a, const Tensor& x, const Tensor& y) {
  detail::expect_rank(kernel, "x", x, 4);
  detail::expect_shape(kernel, "y", y, {x.dim(0), x.dim(1), a.out_h, a.out_w});
}

}  // namespace

void resize_forward(const ResizeAttrs& a, const Tensor& x, Tensor& y) {
  check("resize_forward", a, x, y);
  const std::int64_t planes = x.dim(0) * x.dim(1), h = x.dim(2), w = x.dim(3);
  const std::int64_t oh = a.out_h, ow = a.out_w;
  const Taps rows = taps(a, h, oh), cols = taps(a, w, ow);
  const float* xp = x.f32();
  float* yp = y.f32();
  parallel_for(0, planes, y.numel() > (1 << 16), [&](std::int64_t p) {
    const float* plane = xp + p * h * w;
    float* out = yp + p * oh * ow;
    for (std::int64_t i = 0; i < oh; ++i) {
      const auto r = static_cast<std::size_t>(i);
      const float* top = plane + rows.lo[r] * w;
      const float* bottom = plane + rows.hi[r] * w;
      const float v = rows.w[r];
      for (std::int64_t j = 0; j < ow; ++j) {
        const auto c = static_cast<std::size_t>(j);
        const float u = cols.w[c];
        const float t = top[cols.lo[c]] + u * (top[cols.hi[c]] - top[cols.lo[c]]);
        const float b = bottom[cols.lo[c]] + u * (bottom[cols.hi[c]] - bottom[cols.lo[c]]);
        out[i * ow + j] = t + v * (b - t);
      }
    }
  });
}

void resize_backward(const ResizeAttrs& a, const Tensor& dy, Tensor& dx) {
  check("resize_backward", a, dx, dy);
  const std::int64_t planes = dx.dim(0) * dx.dim(1), h = dx.dim(2), w = dx.dim(3);
  const std::int64_t oh = a.out_h, ow = a.out_w;
  const Taps rows = taps(a, h, oh), cols = taps(a, w, ow);
  const float* gp = dy.f32();
  float* dp = dx.f32();
  parallel_for(0, planes, dy.numel() > (1 << 16), [&](std::int64_t p) {
    float* plane = dp + p * h * w;
    std::fill(plane, plane + h * w, 0.0f);
    const float* g = gp + p * oh * ow;
    for (std::int64_t i = 0; i < oh; ++i) {
      const auto r = static_cast<std::size_t>(i);
      float* top = plane + rows.lo[r] * w;
      float* bottom = plane + rows.hi[r] * w;
      const float v = rows.w[r];
      for (std::int64_t j = 0; j < ow; ++j) {
        const auto c = static_cast<std::size_t>(j);
        const float u = cols.w[c], d = g[i * ow + j];
        top[cols.lo[c]] += (1 - v) * (1 - u) * d;
        top[cols.hi[c]] += (1 - v) * u * d;
        bottom[cols.lo[c]] += v * (1 - u) * d;
        bottom[cols.hi[c]] += v * u * d;
      }
    }
  });
}

}  // namespace telar::ops
