// ConvTranspose2d through the Conv2d kernels: its forward pass is the input gradient of the
// convolution a.as_conv() (the same weight), its input gradient that convolution's forward pass,
// its weight gradient that convolution's weight gradient with the roles of input and output
// gradient exchanged. The bias is added, and its gradient summed, here.
#include <cstdint>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

void conv_transpose2d_forward(const graph::ConvTranspose2dAttrs& a, const Tensor& x,
                              const Tensor& w, const Tensor* b, Tensor& y) {
  // Only y's shape is read as the convolution's input; it receives that input's gradient.
  conv2d_backward(a.as_conv(), y, w, x, &y, nullptr, nullptr);
  if (!b) return;
  detail::expect_shape("conv_transpose2d_forward", "bias", *b, {a.out_channels});
  const std::int64_t n = y.dim(0), o = y.dim(1), plane = y.dim(2) * y.dim(3);
  const float* bp = b->f32();
  float* yp = y.f32();
  parallel_for(0, n * o, y.numel() > (1 << 16), [&](std::int64_t no) {
    const float v = bp[no % o];
    float* p = yp + no * plane;
    for (std::int64_t i = 0; i < plane; ++i) p[i] += v;
  });
}

void conv_transpose2d_backward(const graph::ConvTranspose2dAttrs& a, const Tensor& x,
                               const Tensor& w, const Tensor& dy, Tensor* dx, Tensor* dw,
                               Tensor* db) {
  const graph::Conv2dAttrs conv = a.as_conv();
  if (dx) conv2d_forward(conv, dy, w, nullptr, *dx);
  // The convolution's weight gradient: its input is dy, its output gradient x.
  if (dw) conv2d_backward(conv, dy, w, x, nullptr, dw, nullptr);
  if (db) {
    detail::expect_shape("conv_transpose2d_backward", "db", *db, {a.out_channels});
    const std::int64_t n = dy.dim(0), o = dy.dim(1), plane = dy.dim(2) * dy.dim(3);
    const float* g = dy.f32();
    float* dbp = db->f32();
    parallel_for(0, o, o > 1 && dy.numel() > (1 << 16), [&](std::int64_t c) {
      double acc = 0.0;
      for (std::int64_t k = 0; k < n; ++k) {
        const float* p = g + (k * o + c) * plane;
        for (std::int64_t i = 0; i < plane; ++i) acc += p[i];
      }
      dbp[c] = static_cast<float>(acc);
    });
  }
}

}  // namespace telar::ops
