// Conv2d as a direct cross-correlation over NCHW / OIHW. Every loop nest is arranged so that
// one thread owns each output element it writes (an output plane, an input-gradient plane, a
// weight-gradient filter slice), which keeps results independent of the thread count; the
// padding is handled by clipping each kernel tap's output range instead of testing per element.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/parallel.hpp"
#include "graph/shape_inference.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

struct ConvGeometry {
  std::int64_t n, c, h, w;      // input
  std::int64_t o, oh, ow;       // output
  std::int64_t groups, cg, og;  // channels per group (input, output)
  std::int64_t kh, kw;
};

ConvGeometry geometry(std::string_view kernel, const Conv2dAttrs& a, const Tensor& x,
                      const Tensor& w) {
  detail::expect_rank(kernel, "x", x, 4);
  detail::expect_rank(kernel, "weight", w, 4);
  if (a.groups <= 0 || a.stride_h <= 0 || a.stride_w <= 0 || a.dilation_h <= 0 ||
      a.dilation_w <= 0 || a.pad_h < 0 || a.pad_w < 0)
    fail("internal: {}: invalid attributes (groups {}, stride {}x{}, dilation {}x{}, pad {}x{})",
         kernel, a.groups, a.stride_h, a.stride_w, a.dilation_h, a.dilation_w, a.pad_h, a.pad_w);
  ConvGeometry g{};
  g.n = x.dim(0);
  g.c = x.dim(1);
  g.h = x.dim(2);
  g.w = x.dim(3);
  g.o = w.dim(0);
  g.kh = w.dim(2);
  g.kw = w.dim(3);
  g.groups = a.groups;
  if (g.c % g.groups || g.o % g.groups)
    fail("internal: {}: groups {} must divide channels {} and {}", kernel, g.groups, g.c, g.o);
  g.cg = g.c / g.groups;
  g.og = g.o / g.groups;
  detail::expect_shape(kernel, "weight", w, {g.o, g.cg, a.kernel_h, a.kernel_w});
  g.oh = graph::window_output_size(g.h, g.kh, a.stride_h, a.pad_h, a.dilation_h);
  g.ow = graph::window_output_size(g.w, g.kw, a.stride_w, a.pad_w, a.dilation_w);
  return g;
}

// One filter tap (i, j): its index in the filter plane, where it reads the input relative to an
// output position, and the output rows and columns whose read falls inside the image.
struct Tap {
  std::int64_t index;
  std::int64_t off_h, off_w;
  detail::Range rows, cols;
};

template <typename F>
void for_each_tap(const ConvGeometry& g, const Conv2dAttrs& a, F&& f) {
  for (std::int64_t i = 0; i < g.kh; ++i) {
    const std::int64_t off_h = i * a.dilation_h - a.pad_h;
    const detail::Range rows = detail::valid_outputs(g.h, g.oh, a.stride_h, off_h);
    for (std::int64_t j = 0; j < g.kw; ++j) {
      const std::int64_t off_w = j * a.dilation_w - a.pad_w;
      f(Tap{i * g.kw + j, off_h, off_w, rows, detail::valid_outputs(g.w, g.ow, a.stride_w, off_w)});
    }
  }
}

}  // namespace

void conv2d_forward(const Conv2dAttrs& a, const Tensor& x, const Tensor& w, const Tensor* b,
                    Tensor& y) {
  const ConvGeometry g = geometry("conv2d_forward", a, x, w);
  if (b) detail::expect_shape("conv2d_forward", "bias", *b, {g.o});
  detail::expect_shape("conv2d_forward", "y", y, {g.n, g.o, g.oh, g.ow});
  const float* xp = x.f32();
  const float* wp = w.f32();
  const float* bp = b ? b->f32() : nullptr;
  float* yp = y.f32();
  const std::int64_t in_plane = g.h * g.w, out_plane = g.oh * g.ow;
  const std::int64_t sh = a.stride_h, sw = a.stride_w;

  parallel_for_dynamic(0, g.n * g.o, g.n * g.o > 1, 1, [&](std::int64_t no) {
    const std::int64_t n = no / g.o, o = no % g.o, group = o / g.og;
    float* yplane = yp + no * out_plane;
    std::fill(yplane, yplane + out_plane, bp ? bp[o] : 0.0f);
    for (std::int64_t c = 0; c < g.cg; ++c) {
      const float* xplane = xp + (n * g.c + group * g.cg + c) * in_plane;
      const float* wk = wp + (o * g.cg + c) * g.kh * g.kw;
      for_each_tap(g, a, [&](const Tap& t) {
        const float wv = wk[t.index];
        const std::int64_t off_w = t.off_w;
        for (std::int64_t oh = t.rows.lo; oh < t.rows.hi; ++oh) {
          const float* xrow = xplane + (oh * sh + t.off_h) * g.w;
          float* yrow = yplane + oh * g.ow;
          if (sw == 1) {
#pragma omp simd
            for (std::int64_t ow = t.cols.lo; ow < t.cols.hi; ++ow)
              yrow[ow] += wv * xrow[ow + off_w];
          } else {
            for (std::int64_t ow = t.cols.lo; ow < t.cols.hi; ++ow)
              yrow[ow] += wv * xrow[ow * sw + off_w];
          }
        }
      });
    }
  });
}

void conv2d_backward(const Conv2dAttrs& a, const Tensor& x, const Tensor& w, const Tensor& dy,
                     Tensor* dx, Tensor* dw, Tensor* db) {
  const ConvGeometry g = geometry("conv2d_backward", a, x, w);
  detail::expect_shape("conv2d_backward", "dy", dy, {g.n, g.o, g.oh, g.ow});
  const float* xp = x.f32();
  const float* wp = w.f32();
  const float* dyp = dy.f32();
  const std::int64_t in_plane = g.h * g.w, out_plane = g.oh * g.ow;
  const std::int64_t sh = a.stride_h, sw = a.stride_w;

  if (dx) {
    // dx[n, c] gathers from every output channel of c's group: one thread per input plane.
    detail::expect_shape("conv2d_backward", "dx", *dx, x.shape());
    float* dxp = dx->f32();
    parallel_for_dynamic(0, g.n * g.c, g.n * g.c > 1, 1, [&](std::int64_t nc) {
      const std::int64_t n = nc / g.c, c = nc % g.c, group = c / g.cg, cl = c % g.cg;
      float* dxplane = dxp + nc * in_plane;
      std::fill(dxplane, dxplane + in_plane, 0.0f);
      for (std::int64_t o = group * g.og; o < (group + 1) * g.og; ++o) {
        const float* dyplane = dyp + (n * g.o + o) * out_plane;
        const float* wk = wp + (o * g.cg + cl) * g.kh * g.kw;
        for_each_tap(g, a, [&](const Tap& t) {
          const float wv = wk[t.index];
          const std::int64_t off_w = t.off_w;
          for (std::int64_t oh = t.rows.lo; oh < t.rows.hi; ++oh) {
            float* dxrow = dxplane + (oh * sh + t.off_h) * g.w;
            const float* dyrow = dyplane + oh * g.ow;
            if (sw == 1) {
#pragma omp simd
              for (std::int64_t ow = t.cols.lo; ow < t.cols.hi; ++ow)
                dxrow[ow + off_w] += wv * dyrow[ow];
            } else {
              for (std::int64_t ow = t.cols.lo; ow < t.cols.hi; ++ow)
                dxrow[ow * sw + off_w] += wv * dyrow[ow];
            }
          }
        });
      }
    });
  }

  if (dw) {
    // dw[o, c, i, j] = sum over the batch and output positions of dy * x. Rows are summed in
    // float, rows into a double, so long reductions (large batch x plane) stay accurate.
    detail::expect_shape("conv2d_backward", "dw", *dw, w.shape());
    float* dwp = dw->f32();
    parallel_for_dynamic(0, g.o * g.cg, g.o * g.cg > 1, 1, [&](std::int64_t oc) {
      const std::int64_t o = oc / g.cg, cl = oc % g.cg, group = o / g.og;
      for_each_tap(g, a, [&](const Tap& t) {
        const std::int64_t off_w = t.off_w;
        double acc = 0.0;
        for (std::int64_t n = 0; n < g.n; ++n) {
          const float* xplane = xp + (n * g.c + group * g.cg + cl) * in_plane;
          const float* dyplane = dyp + (n * g.o + o) * out_plane;
          for (std::int64_t oh = t.rows.lo; oh < t.rows.hi; ++oh) {
            const float* xrow = xplane + (oh * sh + t.off_h) * g.w;
            const float* dyrow = dyplane + oh * g.ow;
            float row = 0.0f;
            if (sw == 1) {
#pragma omp simd reduction(+ : row)
              for (std::int64_t ow = t.cols.lo; ow < t.cols.hi; ++ow)
                row += dyrow[ow] * xrow[ow + off_w];
            } else {
              for (std::int64_t ow = t.cols.lo; ow < t.cols.hi; ++ow)
                row += dyrow[ow] * xrow[ow * sw + off_w];
            }
            acc += row;
          }
        }
        dwp[oc * g.kh * g.kw + t.index] = static_cast<float>(acc);
      });
    });
  }

  if (db) {
    detail::expect_shape("conv2d_backward", "db", *db, {g.o});
    float* dbp = db->f32();
    parallel_for(0, g.o, g.o > 1 && g.n * g.o * out_plane > 32768, [&](std::int64_t o) {
      double acc = 0.0;
      for (std::int64_t n = 0; n < g.n; ++n) {
        const float* dyplane = dyp + (n * g.o + o) * out_plane;
        float plane = 0.0f;
#pragma omp simd reduction(+ : plane)
        for (std::int64_t p = 0; p < out_plane; ++p) plane += dyplane[p];
        acc += plane;
      }
      dbp[o] = static_cast<float>(acc);
    });
  }
}

}  // namespace telar::ops
