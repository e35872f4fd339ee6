// MatMul of two computed tensors, one product per leading index, and Expand (a [1, ...]
// parameter repeated over the batch). Each output element is summed by one thread in a fixed
// order, so results do not depend on the number of threads.
#include <algorithm>
#include <cstdint>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

// The leading count and the matrix sizes of a[..., M, K] x b[..., K, N].
struct Dims {
  std::int64_t count, m, k, n;
};

Dims dims_of(const char* kernel, const Tensor& a, const Tensor& b, const Tensor& y) {
  const int r = a.rank();
  if (r < 3 || b.rank() != r)
    fail("internal: {}: operands of ranks {} and {}", kernel, r, b.rank());
  const Dims d{a.numel() / (a.dim(-2) * a.dim(-1)), a.dim(-2), a.dim(-1), b.dim(-1)};
  Shape out = a.shape();
  out.back() = d.n;
  detail::expect_shape(kernel, "y", y, out);
  detail::expect_same_numel(kernel, "b", b, d.count * d.k * d.n);
  return d;
}

}  // namespace

void matmul_forward(const Tensor& a, const Tensor& b, Tensor& y) {
  const Dims d = dims_of("matmul_forward", a, b, y);
  const float* ap = a.f32();
  const float* bp = b.f32();
  float* yp = y.f32();
  // One row of y per task: y[m, :] = sum_k a[m, k] b[k, :] (contiguous rows of b).
  parallel_for(0, d.count * d.m, d.count * d.m * d.k * d.n > 32768, [&](std::int64_t row) {
    const std::int64_t i = row / d.m;
    const float* ar = ap + row * d.k;
    const float* bi = bp + i * d.k * d.n;
    float* yr = yp + row * d.n;
    std::fill(yr, yr + d.n, 0.0f);
    for (std::int64_t k = 0; k < d.k; ++k) {
      const float s = ar[k];
      const float* br = bi + k * d.n;
#pragma omp simd
      for (std::int64_t j = 0; j < d.n; ++j) yr[j] += s * br[j];
    }
  });
}

void matmul_backward(const Tensor& a, const Tensor& b, const Tensor& dy, Tensor* da, Tensor* db) {
  const Dims d = dims_of("matmul_backward", a, b, dy);
  const float* ap = a.f32();
  const float* bp = b.f32();
  const float* dyp = dy.f32();
  const bool big = d.count * d.m * d.k * d.n > 32768;
  if (da) {
    detail::expect_shape("matmul_backward", "da", *da, a.shape());
    float* dap = da->f32();
    // da[m, k] = sum_n dy[m, n] b[k, n]: a dot product of two contiguous rows.
    parallel_for(0, d.count * d.m, big, [&](std::int64_t row) {
      const std::int64_t i = row / d.m;
      const float* dyr = dyp + row * d.n;
      const float* bi = bp + i * d.k * d.n;
      for (std::int64_t k = 0; k < d.k; ++k) {
        const float* br = bi + k * d.n;
        float acc = 0.0f;
#pragma omp simd reduction(+ : acc)
        for (std::int64_t j = 0; j < d.n; ++j) acc += dyr[j] * br[j];
        dap[row * d.k + k] = acc;
      }
    });
  }
  if (db) {
    detail::expect_shape("matmul_backward", "db", *db, b.shape());
    float* dbp = db->f32();
    // db[k, :] = sum_m a[m, k] dy[m, :], one row of db per task.
    parallel_for(0, d.count * d.k, big, [&](std::int64_t row) {
      const std::int64_t i = row / d.k, k = row % d.k;
      float* dbr = dbp + row * d.n;
      std::fill(dbr, dbr + d.n, 0.0f);
      for (std::int64_t m = 0; m < d.m; ++m) {
        const float s = ap[(i * d.m + m) * d.k + k];
        const float* dyr = dyp + (i * d.m + m) * d.n;
#pragma omp simd
        for (std::int64_t j = 0; j < d.n; ++j) dbr[j] += s * dyr[j];
      }
    });
  }
}

void expand_forward(const Tensor& w, Tensor& y) {
  const std::int64_t per_sample = w.numel();
  detail::expect_same_numel("expand_forward", "y", y, y.dim(0) * per_sample);
  const float* wp = w.f32();
  float* yp = y.f32();
  for (std::int64_t s = 0; s < y.dim(0); ++s) std::copy(wp, wp + per_sample, yp + s * per_sample);
}

void expand_backward(const Tensor& dy, Tensor& dw) {
  const std::int64_t per_sample = dw.numel();
  detail::expect_same_numel("expand_backward", "dy", dy, dy.dim(0) * per_sample);
  const float* dyp = dy.f32();
  float* dwp = dw.f32();
  parallel_for(0, per_sample, per_sample * dy.dim(0) > 32768, [&](std::int64_t e) {
    double acc = 0.0;
    for (std::int64_t s = 0; s < dy.dim(0); ++s) acc += dyp[s * per_sample + e];
    dwp[e] = static_cast<float>(acc);
  });
}

}  // namespace telar::ops
