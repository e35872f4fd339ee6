// Linear: y = x w^T + b over the last axis ([B, ..., in] as rows of in features). Each output
// element is one contiguous dot product; reductions over the rows (dw, db) are parallel over
// output features so results do not depend on the number of threads.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

// [B, ..., n] as a matrix of rows [B * ..., n] (a view of the same storage).
Tensor as_rows(std::string_view kernel, std::string_view what, const Tensor& t) {
  if (t.rank() < 2)
    fail("internal: {}: {} has shape {}, expected rank 2 or more", kernel, what,
         shape_str(t.shape()));
  const std::int64_t n = t.shape().back();
  return t.reshaped({n > 0 ? t.numel() / n : 0, n});
}

}  // namespace

void linear_forward(const Tensor& x_in, const Tensor& w, const Tensor* b, Tensor& y_in) {
  const Tensor x = as_rows("linear_forward", "x", x_in);
  Tensor y = as_rows("linear_forward", "y", y_in);
  detail::expect_rank("linear_forward", "weight", w, 2);
  const std::int64_t batch = x.dim(0), in = x.dim(1), out = w.dim(0);
  detail::expect_shape("linear_forward", "weight", w, {out, in});
  if (b) detail::expect_shape("linear_forward", "bias", *b, {out});
  detail::expect_shape("linear_forward", "y", y, {batch, out});
  const float* xp = x.f32();
  const float* wp = w.f32();
  const float* bp = b ? b->f32() : nullptr;
  float* yp = y.f32();
  parallel_for(0, batch, batch * out * in > 32768, [&](std::int64_t n) {
    const float* xr = xp + n * in;
    for (std::int64_t o = 0; o < out; ++o) {
      const float* wr = wp + o * in;
      float acc = 0.0f;
#pragma omp simd reduction(+ : acc)
      for (std::int64_t i = 0; i < in; ++i) acc += xr[i] * wr[i];
      yp[n * out + o] = acc + (bp ? bp[o] : 0.0f);
    }
  });
}

void linear_backward(const Tensor& x_in, const Tensor& w, const Tensor& dy_in, Tensor* dx_in,
                     Tensor* dw, Tensor* db) {
  const Tensor x = as_rows("linear_backward", "x", x_in);
  const Tensor dy = as_rows("linear_backward", "dy", dy_in);
  Tensor dx_rows = dx_in ? as_rows("linear_backward", "dx", *dx_in) : Tensor();
  Tensor* dx = dx_in ? &dx_rows : nullptr;
  const std::int64_t batch = x.dim(0), in = x.dim(1), out = w.dim(0);
  detail::expect_shape("linear_backward", "weight", w, {out, in});
  detail::expect_shape("linear_backward", "dy", dy, {batch, out});
  const float* xp = x.f32();
  const float* wp = w.f32();
  const float* dyp = dy.f32();
  const bool big = batch * out * in > 32768;

  if (dx) {
    detail::expect_shape("linear_backward", "dx", *dx, {batch, in});
    float* dxp = dx->f32();
    parallel_for(0, batch, big, [&](std::int64_t n) {
      float* dxr = dxp + n * in;
      std::fill(dxr, dxr + in, 0.0f);
      for (std::int64_t o = 0; o < out; ++o) {
        const float g = dyp[n * out + o];
        const float* wr = wp + o * in;
#pragma omp simd
        for (std::int64_t i = 0; i < in; ++i) dxr[i] += g * wr[i];
      }
    });
  }
  if (dw) {
    detail::expect_shape("linear_backward", "dw", *dw, {out, in});
    float* dwp = dw->f32();
    parallel_for(0, out, big, [&](std::int64_t o) {
      float* dwr = dwp + o * in;
      std::fill(dwr, dwr + in, 0.0f);
      for (std::int64_t n = 0; n < batch; ++n) {
        const float g = dyp[n * out + o];
        const float* xr = xp + n * in;
#pragma omp simd
        for (std::int64_t i = 0; i < in; ++i) dwr[i] += g * xr[i];
      }
    });
  }
  if (db) {
    detail::expect_shape("linear_backward", "db", *db, {out});
    std::vector<double> acc(static_cast<std::size_t>(out), 0.0);
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t o = 0; o < out; ++o) acc[o] += dyp[n * out + o];
    float* dbp = db->f32();
    for (std::int64_t o = 0; o < out; ++o) dbp[o] = static_cast<float>(acc[o]);
  }
}

}  // namespace telar::ops
