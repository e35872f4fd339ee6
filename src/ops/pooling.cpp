// MaxPool2d, AvgPool2d and global average pooling over NCHW, one (n, c) plane per thread.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/parallel.hpp"
#include "graph/shape_inference.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

struct PoolGeometry {
  std::int64_t planes, h, w, oh, ow;
};

PoolGeometry geometry(std::string_view kernel, const Pool2dAttrs& a, const Tensor& x_or_dx,
                      const Tensor& y_or_dy) {
  detail::expect_rank(kernel, "input", x_or_dx, 4);
  if (a.kernel_h <= 0 || a.kernel_w <= 0 || a.stride_h <= 0 || a.stride_w <= 0 || a.pad_h < 0 ||
      a.pad_w < 0)
    fail("internal: {}: invalid window (kernel {}x{}, stride {}x{}, pad {}x{})", kernel, a.kernel_h,
         a.kernel_w, a.stride_h, a.stride_w, a.pad_h, a.pad_w);
  PoolGeometry g{};
  g.planes = x_or_dx.dim(0) * x_or_dx.dim(1);
  g.h = x_or_dx.dim(2);
  g.w = x_or_dx.dim(3);
  g.oh = graph::window_output_size(g.h + a.end_pad.h, a.kernel_h, a.stride_h, a.pad_h);
  g.ow = graph::window_output_size(g.w + a.end_pad.w, a.kernel_w, a.stride_w, a.pad_w);
  detail::expect_shape(kernel, "output", y_or_dy, {x_or_dx.dim(0), x_or_dx.dim(1), g.oh, g.ow});
  return g;
}

// The in-bounds part [h0, h1) x [w0, w1) of the window of output (oh, ow), and the size of the
// window within the padded input (PyTorch's count_include_pad divisor: kh * kw except where a
// window would hang past the padding, which floor mode with pad <= kernel / 2 never does).
struct Window {
  std::int64_t h0, h1, w0, w1;
  std::int64_t padded_size;
  std::int64_t inside() const { return (h1 - h0) * (w1 - w0); }
};

Window window(const Pool2dAttrs& a, const PoolGeometry& g, std::int64_t oh, std::int64_t ow) {
  const std::int64_t hs = oh * a.stride_h - a.pad_h, ws = ow * a.stride_w - a.pad_w;
  const std::int64_t he = std::min(hs + a.kernel_h, g.h + a.pad_h + a.end_pad.h);
  const std::int64_t we = std::min(ws + a.kernel_w, g.w + a.pad_w + a.end_pad.w);
  Window win{std::max<std::int64_t>(hs, 0), std::min(he, g.h), std::max<std::int64_t>(ws, 0),
             std::min(we, g.w), (he - hs) * (we - ws)};
  win.h1 = std::max(win.h1, win.h0);
  win.w1 = std::max(win.w1, win.w0);
  return win;
}

// Runs f(plane, dx's plane zero-filled) for every (n, c) plane of the input gradient, in
// parallel: each plane is written by one thread.
template <typename F>
void for_each_gradient_plane(const PoolGeometry& g, Tensor& dx, F&& f) {
  float* dxp = dx.f32();
  const std::int64_t in_plane = g.h * g.w;
  parallel_for(0, g.planes, g.planes > 1 && dx.numel() > 32768, [&](std::int64_t pl) {
    float* dxs = dxp + pl * in_plane;
    std::fill(dxs, dxs + in_plane, 0.0f);
    f(pl, dxs);
  });
}

}  // namespace

void maxpool2d_forward(const Pool2dAttrs& a, const Tensor& x, Tensor& y, Tensor& argmax) {
  const PoolGeometry g = geometry("maxpool2d_forward", a, x, y);
  detail::expect_shape("maxpool2d_forward", "argmax", argmax, y.shape());
  const float* xp = x.f32();
  float* yp = y.f32();
  std::int32_t* ap = argmax.data<std::int32_t>();
  const std::int64_t in_plane = g.h * g.w, out_plane = g.oh * g.ow;
  if (in_plane > std::numeric_limits<std::int32_t>::max())
    fail("maxpool2d_forward: a {}x{} plane is too large for i32 argmax indices", g.h, g.w);
  parallel_for(0, g.planes, g.planes > 1 && x.numel() > 32768, [&](std::int64_t pl) {
    const float* xs = xp + pl * in_plane;
    for (std::int64_t oh = 0; oh < g.oh; ++oh) {
      for (std::int64_t ow = 0; ow < g.ow; ++ow) {
        const Window win = window(a, g, oh, ow);
        // Padding is -inf, so only in-bounds elements compete; strict > keeps the first of
        // equal maxima in window order, and the first NaN wins (NaN propagates like PyTorch).
        float best = -std::numeric_limits<float>::infinity();
        std::int64_t best_index = -1;
        for (std::int64_t ih = win.h0; ih < win.h1; ++ih) {
          for (std::int64_t iw = win.w0; iw < win.w1; ++iw) {
            const float v = xs[ih * g.w + iw];
            if (best_index < 0 || v > best || (std::isnan(v) && !std::isnan(best))) {
              best = v;
              best_index = ih * g.w + iw;
            }
          }
        }
        yp[pl * out_plane + oh * g.ow + ow] = best;
        ap[pl * out_plane + oh * g.ow + ow] = static_cast<std::int32_t>(best_index);
      }
    }
  });
}

void maxpool2d_backward(const Pool2dAttrs& a, const Tensor& argmax, const Tensor& dy, Tensor& dx) {
  const PoolGeometry g = geometry("maxpool2d_backward", a, dx, dy);
  detail::expect_shape("maxpool2d_backward", "argmax", argmax, dy.shape());
  const std::int32_t* ap = argmax.data<std::int32_t>();
  const float* dyp = dy.f32();
  const std::int64_t in_plane = g.h * g.w, out_plane = g.oh * g.ow;
  for_each_gradient_plane(g, dx, [&](std::int64_t pl, float* dxs) {
    for (std::int64_t i = 0; i < out_plane; ++i) {
      const std::int64_t src = ap[pl * out_plane + i];
      // A window entirely in padding has no input to route to (shape inference prevents it).
      if (src >= 0 && src < in_plane) dxs[src] += dyp[pl * out_plane + i];
    }
  });
}

void avgpool2d_forward(const Pool2dAttrs& a, const Tensor& x, Tensor& y) {
  const PoolGeometry g = geometry("avgpool2d_forward", a, x, y);
  const float* xp = x.f32();
  float* yp = y.f32();
  const std::int64_t in_plane = g.h * g.w, out_plane = g.oh * g.ow;
  parallel_for(0, g.planes, g.planes > 1 && x.numel() > 32768, [&](std::int64_t pl) {
    const float* xs = xp + pl * in_plane;
    for (std::int64_t oh = 0; oh < g.oh; ++oh) {
      for (std::int64_t ow = 0; ow < g.ow; ++ow) {
        const Window win = window(a, g, oh, ow);
        float sum = 0.0f;
        for (std::int64_t ih = win.h0; ih < win.h1; ++ih)
          for (std::int64_t iw = win.w0; iw < win.w1; ++iw) sum += xs[ih * g.w + iw];
        const std::int64_t divisor = a.count_include_pad ? win.padded_size : win.inside();
        yp[pl * out_plane + oh * g.ow + ow] =
            divisor > 0 ? sum / static_cast<float>(divisor) : 0.0f;
      }
    }
  });
}

void avgpool2d_backward(const Pool2dAttrs& a, const Tensor& dy, Tensor& dx) {
  const PoolGeometry g = geometry("avgpool2d_backward", a, dx, dy);
  const float* dyp = dy.f32();
  const std::int64_t out_plane = g.oh * g.ow;
  for_each_gradient_plane(g, dx, [&](std::int64_t pl, float* dxs) {
    for (std::int64_t oh = 0; oh < g.oh; ++oh) {
      for (std::int64_t ow = 0; ow < g.ow; ++ow) {
        const Window win = window(a, g, oh, ow);
        const std::int64_t divisor = a.count_include_pad ? win.padded_size : win.inside();
        if (divisor <= 0) continue;
        const float share = dyp[pl * out_plane + oh * g.ow + ow] / static_cast<float>(divisor);
        for (std::int64_t ih = win.h0; ih < win.h1; ++ih)
          for (std::int64_t iw = win.w0; iw < win.w1; ++iw) dxs[ih * g.w + iw] += share;
      }
    }
  });
}

void global_avgpool_forward(const Tensor& x, Tensor& y) {
  detail::expect_rank("global_avgpool_forward", "x", x, 4);
  detail::expect_shape("global_avgpool_forward", "y", y, {x.dim(0), x.dim(1)});
  const std::int64_t planes = x.dim(0) * x.dim(1), plane = x.dim(2) * x.dim(3);
  const float* xp = x.f32();
  float* yp = y.f32();
  parallel_for(0, planes, planes > 1 && x.numel() > 32768, [&](std::int64_t pl) {
    const float* xs = xp + pl * plane;
    double sum = 0.0;
    for (std::int64_t i = 0; i < plane; ++i) sum += xs[i];
    yp[pl] = plane > 0 ? static_cast<float>(sum / static_cast<double>(plane)) : 0.0f;
  });
}

void global_avgpool_backward(const Tensor& dy, Tensor& dx) {
  detail::expect_rank("global_avgpool_backward", "dx", dx, 4);
  detail::expect_shape("global_avgpool_backward", "dy", dy, {dx.dim(0), dx.dim(1)});
  const std::int64_t planes = dx.dim(0) * dx.dim(1), plane = dx.dim(2) * dx.dim(3);
  const float* dyp = dy.f32();
  float* dxp = dx.f32();
  const float inv = plane > 0 ? 1.0f / static_cast<float>(plane) : 0.0f;
  parallel_for(0, planes, planes > 1 && dx.numel() > 32768, [&](std::int64_t pl) {
    const float g = dyp[pl] * inv;
    std::fill(dxp + pl * plane, dxp + (pl + 1) * plane, g);
  });
}

}  // namespace telar::ops
