// LayerNorm over the last axis, one row per iteration (a row of a few hundred features stays in
// the L1 cache across its three passes: mean, variance, output).
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

struct Rows {
  std::int64_t count = 0, width = 0;
};

Rows rows_of(std::string_view kernel, const LayerNormAttrs& a, const Tensor& x,
             const Tensor& scale) {
  if (x.rank() < 1 || x.dim(x.rank() - 1) != a.features)
    fail("internal: {}: x has shape {}, expected {} features last", kernel, shape_str(x.shape()),
         a.features);
  detail::expect_shape(kernel, "scale", scale, {a.features});
  return {x.numel() / a.features, a.features};
}

struct Statistics {
  float mean = 0.0f, inv_std = 0.0f;
};

// Two passes (the mean, then the mean square deviation from it): no cancellation when the
// mean is large against the spread, as one pass of sums of squares would have.
Statistics statistics(const float* row, std::int64_t w, float eps) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (std::int64_t k = 0; k < w; ++k) sum += row[k];
  const float mean = sum / static_cast<float>(w);
  float square = 0.0f;
#pragma omp simd reduction(+ : square)
  for (std::int64_t k = 0; k < w; ++k) square += (row[k] - mean) * (row[k] - mean);
  return {mean, 1.0f / std::sqrt(square / static_cast<float>(w) + eps)};
}

}  // namespace

void layer_norm_forward(const LayerNormAttrs& a, const Tensor& x, const Tensor& scale,
                        const Tensor& bias, Tensor& y) {
  constexpr std::string_view kName = "layer_norm_forward";
  const Rows r = rows_of(kName, a, x, scale);
  detail::expect_shape(kName, "bias", bias, {a.features});
  detail::expect_shape(kName, "y", y, x.shape());
  const float *xp = x.f32(), *g = scale.f32(), *b = bias.f32();
  float* yp = y.f32();
  parallel_for(0, r.count, x.numel() > (1 << 14), [&](std::int64_t i) {
    const float* row = xp + i * r.width;
    float* out = yp + i * r.width;
    const Statistics s = statistics(row, r.width, a.eps);
#pragma omp simd
    for (std::int64_t k = 0; k < r.width; ++k) out[k] = (row[k] - s.mean) * s.inv_std * g[k] + b[k];
  });
}

void layer_norm_backward(const LayerNormAttrs& a, const Tensor& x, const Tensor& scale,
                         const Tensor& dy, Tensor* dx, Tensor* dscale, Tensor* dbias) {
  constexpr std::string_view kName = "layer_norm_backward";
  const Rows r = rows_of(kName, a, x, scale);
  detail::expect_shape(kName, "dy", dy, x.shape());
  if (dx) detail::expect_shape(kName, "dx", *dx, x.shape());
  if (dscale) detail::expect_shape(kName, "dscale", *dscale, {a.features});
  if (dbias) detail::expect_shape(kName, "dbias", *dbias, {a.features});
  const float *xp = x.f32(), *g = scale.f32(), *dyp = dy.f32();
  const std::int64_t w = r.width;
  // With xhat = (x - mean) * inv_std, y = xhat * scale + bias and g = dy * scale:
  //   dbias = sum over rows of dy, dscale = sum over rows of dy * xhat,
  //   dx = inv_std * (g - mean(g) - xhat * mean(g * xhat)), the means over the row.
  // Each row's statistics once, for both.
  const bool threaded = x.numel() > (1 << 14);
  std::vector<Statistics> stats(static_cast<std::size_t>(r.count));
  parallel_for(0, r.count, threaded, [&](std::int64_t i) {
    stats[static_cast<std::size_t>(i)] = statistics(xp + i * w, w, a.eps);
  });
  if (dscale || dbias) {
    // The sums over rows in double, row after row (the parameters' gradients are shared by every
    // row, so rows are not split across threads here).
    std::vector<double> ds(static_cast<std::size_t>(w)), db(static_cast<std::size_t>(w));
    for (std::int64_t i = 0; i < r.count; ++i) {
      const float* row = xp + i * w;
      const float* d = dyp + i * w;
      const Statistics s = stats[static_cast<std::size_t>(i)];
      for (std::int64_t k = 0; k < w; ++k) {
        db[static_cast<std::size_t>(k)] += d[k];
        ds[static_cast<std::size_t>(k)] += d[k] * ((row[k] - s.mean) * s.inv_std);
      }
    }
    for (std::int64_t k = 0; k < w; ++k) {
      if (dscale) dscale->f32()[k] = static_cast<float>(ds[static_cast<std::size_t>(k)]);
      if (dbias) dbias->f32()[k] = static_cast<float>(db[static_cast<std::size_t>(k)]);
    }
  }
  if (!dx) return;
  float* dxp = dx->f32();
  parallel_for(0, r.count, threaded, [&](std::int64_t i) {
    const float* row = xp + i * w;
    const float* d = dyp + i * w;
    float* out = dxp + i * w;
    const Statistics s = stats[static_cast<std::size_t>(i)];
    float sum_g = 0.0f, sum_g_xhat = 0.0f;
#pragma omp simd reduction(+ : sum_g, sum_g_xhat)
    for (std::int64_t k = 0; k < w; ++k) {
      const float gk = d[k] * g[k];
      sum_g += gk;
      sum_g_xhat += gk * (row[k] - s.mean) * s.inv_std;
    }
    const float mean_g = sum_g / static_cast<float>(w);
    const float mean_g_xhat = sum_g_xhat / static_cast<float>(w);
#pragma omp simd
    for (std::int64_t k = 0; k < w; ++k) {
      const float xhat = (row[k] - s.mean) * s.inv_std;
      out[k] = s.inv_std * (d[k] * g[k] - mean_g - xhat * mean_g_xhat);
    }
  });
}

}  // namespace telar::ops
