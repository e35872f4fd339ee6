// ReduceMean over one axis: per (outer, inner) position, the mean of the axis's n elements.
#include <cstdint>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

struct Extent {
  std::int64_t outer = 1, n = 1, inner = 1;
};

Extent extent(std::string_view kernel, std::int64_t axis, const Tensor& x, const Tensor& y) {
  if (axis < 0 || axis >= x.rank()) fail("internal: {}: axis {} of {}", kernel, axis, shape_str(x.shape()));
  Shape reduced = x.shape();
  reduced[static_cast<std::size_t>(axis)] = 1;
  detail::expect_shape(kernel, "y", y, reduced);
  Extent e;
  e.n = x.dim(static_cast<int>(axis));
  for (int k = 0; k < axis; ++k) e.outer *= x.dim(k);
  for (int k = static_cast<int>(axis) + 1; k < x.rank(); ++k) e.inner *= x.dim(k);
  return e;
}

}  // namespace

void reduce_mean_forward(std::int64_t axis, const Tensor& x, Tensor& y) {
  const Extent e = extent("reduce_mean_forward", axis, x, y);
  const float* xp = x.f32();
  float* yp = y.f32();
  if (e.inner == 1) {
    // The last axis (a layer norm's mean over NHWC channels): each row summed in kLanes
    // interleaved partial sums, which the compiler vectorises; one running sum is a chain of
    // dependent additions.
    constexpr std::int64_t kLanes = 16;
    parallel_for(0, e.outer, x.numel() > (1 << 16), [&](std::int64_t o) {
      const float* in = xp + o * e.n;
      float lanes[kLanes] = {};
      std::int64_t k = 0;
      for (; k + kLanes <= e.n; k += kLanes)
        for (std::int64_t l = 0; l < kLanes; ++l) lanes[l] += in[k + l];
      float sum = 0.0f;
      for (; k < e.n; ++k) sum += in[k];
      for (float lane : lanes) sum += lane;
      yp[o] = sum / static_cast<float>(e.n);
    });
    return;
  }
  parallel_for(0, e.outer, x.numel() > (1 << 16), [&](std::int64_t o) {
    float* out = yp + o * e.inner;
    for (std::int64_t j = 0; j < e.inner; ++j) out[j] = 0.0f;
    for (std::int64_t k = 0; k < e.n; ++k) {
      const float* in = xp + (o * e.n + k) * e.inner;
      for (std::int64_t j = 0; j < e.inner; ++j) out[j] += in[j];
    }
    for (std::int64_t j = 0; j < e.inner; ++j) out[j] /= static_cast<float>(e.n);
  });
}

void reduce_mean_backward(std::int64_t axis, const Tensor& dy, Tensor& dx) {
  const Extent e = extent("reduce_mean_backward", axis, dx, dy);
  const float* gp = dy.f32();
  float* dp = dx.f32();
  const float scale = 1.0f / static_cast<float>(e.n);
  parallel_for(0, e.outer, dx.numel() > (1 << 16), [&](std::int64_t o) {
    for (std::int64_t k = 0; k < e.n; ++k) {
      float* out = dp + (o * e.n + k) * e.inner;
      const float* g = gp + o * e.inner;
      for (std::int64_t j = 0; j < e.inner; ++j) out[j] = g[j] * scale;
    }
  });
}

}  // namespace telar::ops
