// Softmax over the last axis, one row per thread; the row maximum is subtracted before
// exponentiating so large logits do not overflow.
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

void softmax_forward(const Tensor& x, Tensor& y) {
  detail::expect_shape("softmax_forward", "y", y, x.shape());
  const std::int64_t n = x.dim(x.rank() - 1), rows = x.numel() / n;
  const float* xp = x.f32();
  float* yp = y.f32();
  parallel_for(0, rows, rows * n > 32768, [&](std::int64_t r) {
    const float* xr = xp + r * n;
    float* yr = yp + r * n;
    float max = -std::numeric_limits<float>::infinity();
    for (std::int64_t i = 0; i < n; ++i) max = std::fmax(max, xr[i]);
    double sum = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
      yr[i] = std::exp(xr[i] - max);
      sum += yr[i];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (std::int64_t i = 0; i < n; ++i) yr[i] *= inv;
  });
}

void softmax_backward(const Tensor& y, const Tensor& dy, Tensor& dx) {
  detail::expect_shape("softmax_backward", "dy", dy, y.shape());
  detail::expect_shape("softmax_backward", "dx", dx, y.shape());
  const std::int64_t n = y.dim(y.rank() - 1), rows = y.numel() / n;
  const float* yp = y.f32();
  const float* dyp = dy.f32();
  float* dxp = dx.f32();
  // dx_i = y_i * (dy_i - sum_j dy_j y_j)
  parallel_for(0, rows, rows * n > 32768, [&](std::int64_t r) {
    const float* yr = yp + r * n;
    const float* dyr = dyp + r * n;
    float* dxr = dxp + r * n;
    double dot = 0.0;
    for (std::int64_t i = 0; i < n; ++i) dot += static_cast<double>(dyr[i]) * yr[i];
    const float d = static_cast<float>(dot);
    for (std::int64_t i = 0; i < n; ++i) dxr[i] = yr[i] * (dyr[i] - d);
  });
}

}  // namespace telar::ops
