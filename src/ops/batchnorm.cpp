// BatchNorm2d over NCHW, one channel per thread. Statistics are accumulated in double with a
// two-pass variance (mean first, then squared deviations) so they stay accurate for large
// batches and for inputs with a large mean.
#include <cmath>
#include <cstdint>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

struct BnGeometry {
  std::int64_t n, c, plane;
  std::int64_t count() const { return n * plane; }  // elements per channel
};

BnGeometry geometry(std::string_view kernel, const BatchNormAttrs& a, const Tensor& x) {
  detail::expect_rank(kernel, "x", x, 4);
  BnGeometry g{x.dim(0), x.dim(1), x.dim(2) * x.dim(3)};
  if (a.channels != g.c)
    fail("internal: {}: input has {} channels, attributes say {}", kernel, g.c, a.channels);
  return g;
}

void expect_channel_vector(std::string_view kernel, std::string_view what, const Tensor& t,
                           std::int64_t c) {
  detail::expect_shape(kernel, what, t, {c});
}

}  // namespace

void batchnorm_forward_train(const BatchNormAttrs& a, const Tensor& x, const Tensor& gamma,
                             const Tensor& beta, Tensor& running_mean, Tensor& running_var,
                             Tensor& y, Tensor& saved_mean, Tensor& saved_inv_std) {
  constexpr std::string_view kName = "batchnorm_forward_train";
  const BnGeometry g = geometry(kName, a, x);
  expect_channel_vector(kName, "gamma", gamma, g.c);
  expect_channel_vector(kName, "beta", beta, g.c);
  expect_channel_vector(kName, "running_mean", running_mean, g.c);
  expect_channel_vector(kName, "running_var", running_var, g.c);
  expect_channel_vector(kName, "saved_mean", saved_mean, g.c);
  expect_channel_vector(kName, "saved_inv_std", saved_inv_std, g.c);
  detail::expect_shape(kName, "y", y, x.shape());
  const std::int64_t count = g.count();
  // The running variance is unbiased (divides by count - 1), undefined for one value.
  require(count > 1,
          "BatchNorm2d in training mode needs more than one value per channel, got input {}; "
          "use a batch larger than 1 or evaluation mode",
          shape_str(x.shape()));
  const float* xp = x.f32();
  float* yp = y.f32();
  const double momentum = a.momentum;

  parallel_for(0, g.c, g.c > 1 && x.numel() > 32768, [&](std::int64_t c) {
    double sum = 0.0;
    for (std::int64_t n = 0; n < g.n; ++n) {
      const float* xs = xp + (n * g.c + c) * g.plane;
      for (std::int64_t p = 0; p < g.plane; ++p) sum += xs[p];
    }
    const double mean = sum / static_cast<double>(count);
    double squares = 0.0;
    for (std::int64_t n = 0; n < g.n; ++n) {
      const float* xs = xp + (n * g.c + c) * g.plane;
      for (std::int64_t p = 0; p < g.plane; ++p) {
        const double d = xs[p] - mean;
        squares += d * d;
      }
    }
    const double var = squares / static_cast<double>(count);
    const double inv_std = 1.0 / std::sqrt(var + static_cast<double>(a.eps));
    // (x - mean) first: folding the mean into a shift would cancel badly when |mean| >> std.
    const float scale = static_cast<float>(gamma.f32()[c] * inv_std);
    const float shift = beta.f32()[c];
    const float m = static_cast<float>(mean);
    for (std::int64_t n = 0; n < g.n; ++n) {
      const float* xs = xp + (n * g.c + c) * g.plane;
      float* ys = yp + (n * g.c + c) * g.plane;
#pragma omp simd
      for (std::int64_t p = 0; p < g.plane; ++p) ys[p] = (xs[p] - m) * scale + shift;
    }
    saved_mean.f32()[c] = static_cast<float>(mean);
    saved_inv_std.f32()[c] = static_cast<float>(inv_std);
    const double unbiased = squares / static_cast<double>(count - 1);
    running_mean.f32()[c] =
        static_cast<float>((1.0 - momentum) * running_mean.f32()[c] + momentum * mean);
    running_var.f32()[c] =
        static_cast<float>((1.0 - momentum) * running_var.f32()[c] + momentum * unbiased);
  });
}

void batchnorm_forward_eval(const BatchNormAttrs& a, const Tensor& x, const Tensor& gamma,
                            const Tensor& beta, const Tensor& running_mean,
                            const Tensor& running_var, Tensor& y) {
  constexpr std::string_view kName = "batchnorm_forward_eval";
  const BnGeometry g = geometry(kName, a, x);
  expect_channel_vector(kName, "gamma", gamma, g.c);
  expect_channel_vector(kName, "beta", beta, g.c);
  expect_channel_vector(kName, "running_mean", running_mean, g.c);
  expect_channel_vector(kName, "running_var", running_var, g.c);
  detail::expect_shape(kName, "y", y, x.shape());
  const float* xp = x.f32();
  float* yp = y.f32();
  parallel_for(0, g.n * g.c, g.n * g.c > 1 && x.numel() > 32768, [&](std::int64_t nc) {
    const std::int64_t c = nc % g.c;
    const double inv_std =
        1.0 / std::sqrt(static_cast<double>(running_var.f32()[c]) + static_cast<double>(a.eps));
    const float scale = static_cast<float>(gamma.f32()[c] * inv_std);
    const float shift = beta.f32()[c];
    const float m = running_mean.f32()[c];
    const float* xs = xp + nc * g.plane;
    float* ys = yp + nc * g.plane;
#pragma omp simd
    for (std::int64_t p = 0; p < g.plane; ++p) ys[p] = (xs[p] - m) * scale + shift;
  });
}

void batchnorm_backward(const BatchNormAttrs& a, const Tensor& x, const Tensor& gamma,
                        const Tensor& saved_mean, const Tensor& saved_inv_std, const Tensor& dy,
                        Tensor* dx, Tensor* dgamma, Tensor* dbeta) {
  constexpr std::string_view kName = "batchnorm_backward";
  const BnGeometry g = geometry(kName, a, x);
  expect_channel_vector(kName, "gamma", gamma, g.c);
  expect_channel_vector(kName, "saved_mean", saved_mean, g.c);
  expect_channel_vector(kName, "saved_inv_std", saved_inv_std, g.c);
  detail::expect_shape(kName, "dy", dy, x.shape());
  if (dx) detail::expect_shape(kName, "dx", *dx, x.shape());
  if (dgamma) expect_channel_vector(kName, "dgamma", *dgamma, g.c);
  if (dbeta) expect_channel_vector(kName, "dbeta", *dbeta, g.c);
  const float* xp = x.f32();
  const float* dyp = dy.f32();
  const double count = static_cast<double>(g.count());

  // With xhat = (x - mean) * inv_std and y = gamma * xhat + beta:
  //   dbeta = sum(dy), dgamma = sum(dy * xhat),
  //   dx = gamma * inv_std * (dy - dbeta / M - xhat * dgamma / M), M = N * H * W.
  parallel_for(0, g.c, g.c > 1 && x.numel() > 32768, [&](std::int64_t c) {
    const double mean = saved_mean.f32()[c];
    const double inv_std = saved_inv_std.f32()[c];
    double sum_dy = 0.0, sum_dy_xhat = 0.0;
    for (std::int64_t n = 0; n < g.n; ++n) {
      const float* xs = xp + (n * g.c + c) * g.plane;
      const float* dys = dyp + (n * g.c + c) * g.plane;
      for (std::int64_t p = 0; p < g.plane; ++p) {
        sum_dy += dys[p];
        sum_dy_xhat += dys[p] * ((xs[p] - mean) * inv_std);
      }
    }
    if (dbeta) dbeta->f32()[c] = static_cast<float>(sum_dy);
    if (dgamma) dgamma->f32()[c] = static_cast<float>(sum_dy_xhat);
    if (dx) {
      const float k = static_cast<float>(gamma.f32()[c] * inv_std);
      const float mean_dy = static_cast<float>(sum_dy / count);
      const float mean_dy_xhat = static_cast<float>(sum_dy_xhat / count);
      const float m = static_cast<float>(mean), s = static_cast<float>(inv_std);
      for (std::int64_t n = 0; n < g.n; ++n) {
        const float* xs = xp + (n * g.c + c) * g.plane;
        const float* dys = dyp + (n * g.c + c) * g.plane;
        float* dxs = dx->f32() + (n * g.c + c) * g.plane;
#pragma omp simd
        for (std::int64_t p = 0; p < g.plane; ++p)
          dxs[p] = k * (dys[p] - mean_dy - (xs[p] - m) * s * mean_dy_xhat);
      }
    }
  });
}

}  // namespace telar::ops
