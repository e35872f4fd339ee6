// Resize: each output pixel of a plane reads one input pixel (nearest) or a weighted 2x2 block
// (linear), the same for every plane, so each axis's source pixels and weights are computed once
// (Taps) and the planes run in parallel (each_row); the backward scatters within its own plane.
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

// Calls row(p, i, top, bottom, v) for output row i of each plane p of x (the input's shape):
// that row mixes the input rows at offsets `top` and `bottom` of x's data, weighed 1 - v and v.
// In parallel over the planes, each plane's rows in one thread (the backward accumulates
// within its plane).
template <typename Row>
void each_row(const graph::ResizeAttrs& a, const Tensor& x, Row row) {
  const std::int64_t planes = x.dim(0) * x.dim(1), h = x.dim(2), w = x.dim(3);
  const Taps rows = taps(a, h, a.out_h);
  parallel_for(0, planes, planes * a.out_h * a.out_w > (1 << 16), [&](std::int64_t p) {
    for (std::int64_t i = 0; i < a.out_h; ++i) {
      const auto r = static_cast<std::size_t>(i);
      row(p, i, (p * h + rows.lo[r]) * w, (p * h + rows.hi[r]) * w, rows.w[r]);
    }
  });
}

}  // namespace

void resize_forward(const ResizeAttrs& a, const Tensor& x, Tensor& y) {
  check("resize_forward", a, x, y);
  const Taps cols = taps(a, x.dim(3), a.out_w);
  const float* xp = x.f32();
  float* yp = y.f32();
  each_row(a, x,
           [&](std::int64_t p, std::int64_t i, std::int64_t top, std::int64_t bottom, float v) {
             float* out = yp + (p * a.out_h + i) * a.out_w;
             if (a.mode == graph::ResizeMode::Nearest) {  // a copy (its taps weigh 1 and 0)
               for (std::size_t c = 0; c < cols.lo.size(); ++c) out[c] = xp[top + cols.lo[c]];
               return;
             }
             for (std::size_t c = 0; c < cols.lo.size(); ++c) {
               const float u = cols.w[c];
               const float* t = xp + top;
               const float* b = xp + bottom;
               const float upper = t[cols.lo[c]] + u * (t[cols.hi[c]] - t[cols.lo[c]]);
               const float lower = b[cols.lo[c]] + u * (b[cols.hi[c]] - b[cols.lo[c]]);
               out[c] = upper + v * (lower - upper);
             }
           });
}

void resize_backward(const ResizeAttrs& a, const Tensor& dy, Tensor& dx) {
  check("resize_backward", a, dx, dy);
  const Taps cols = taps(a, dx.dim(3), a.out_w);
  const float* gp = dy.f32();
  float* dp = dx.f32();
  std::fill(dp, dp + dx.numel(), 0.0f);
  each_row(a, dx,
           [&](std::int64_t p, std::int64_t i, std::int64_t top, std::int64_t bottom, float v) {
             const float* g = gp + (p * a.out_h + i) * a.out_w;
             if (a.mode == graph::ResizeMode::Nearest) {
               for (std::size_t c = 0; c < cols.lo.size(); ++c) dp[top + cols.lo[c]] += g[c];
               return;
             }
             for (std::size_t c = 0; c < cols.lo.size(); ++c) {
               const float u = cols.w[c], d = g[c];
               dp[top + cols.lo[c]] += (1 - v) * (1 - u) * d;
               dp[top + cols.hi[c]] += (1 - v) * u * d;
               dp[bottom + cols.lo[c]] += v * (1 - u) * d;
               dp[bottom + cols.hi[c]] += v * u * d;
             }
           });
}

}  // namespace telar::ops
