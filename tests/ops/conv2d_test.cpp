#include <gtest/gtest.h>

#include "graph/shape_inference.hpp"
#include "ops/kernels.hpp"
#include "test_util.hpp"

using namespace telar;
using namespace telar::ops;
using namespace telar::ops::testing;

namespace {

Conv2dAttrs conv(std::int64_t c, std::int64_t o, std::int64_t kh, std::int64_t kw,
                 std::int64_t stride = 1, std::int64_t pad = 0, std::int64_t dilation = 1,
                 std::int64_t groups = 1) {
  Conv2dAttrs a;
  a.in_channels = c;
  a.out_channels = o;
  a.kernel_h = kh;
  a.kernel_w = kw;
  a.stride_h = a.stride_w = stride;
  a.pad_h = a.pad_w = pad;
  a.dilation_h = a.dilation_w = dilation;
  a.groups = groups;
  return a;
}

Shape output_shape(const Conv2dAttrs& a, const Tensor& x) {
  return {x.dim(0), a.out_channels,
          graph::window_output_size(x.dim(2), a.kernel_h, a.stride_h, a.pad_h, a.dilation_h),
          graph::window_output_size(x.dim(3), a.kernel_w, a.stride_w, a.pad_w, a.dilation_w)};
}

Tensor run(const Conv2dAttrs& a, const Tensor& x, const Tensor& w, const Tensor* b) {
  Tensor y(output_shape(a, x));
  conv2d_forward(a, x, w, b, y);
  return y;
}

// The definition, one output element at a time with explicit bounds tests, in double.
Tensor naive_conv(const Conv2dAttrs& a, const Tensor& x, const Tensor& w, const Tensor* b) {
  Tensor y(output_shape(a, x));
  const std::int64_t n_ = x.dim(0), c_ = x.dim(1), h_ = x.dim(2), w_ = x.dim(3);
  const std::int64_t o_ = a.out_channels, cg = c_ / a.groups, og = o_ / a.groups;
  const std::int64_t oh_ = y.dim(2), ow_ = y.dim(3);
  for (std::int64_t n = 0; n < n_; ++n)
    for (std::int64_t o = 0; o < o_; ++o)
      for (std::int64_t oh = 0; oh < oh_; ++oh)
        for (std::int64_t ow = 0; ow < ow_; ++ow) {
          double acc = b ? b->f32()[o] : 0.0;
          for (std::int64_t c = 0; c < cg; ++c)
            for (std::int64_t i = 0; i < a.kernel_h; ++i)
              for (std::int64_t j = 0; j < a.kernel_w; ++j) {
                const std::int64_t ih = oh * a.stride_h - a.pad_h + i * a.dilation_h;
                const std::int64_t iw = ow * a.stride_w - a.pad_w + j * a.dilation_w;
                if (ih < 0 || ih >= h_ || iw < 0 || iw >= w_) continue;
                const std::int64_t ci = (o / og) * cg + c;
                acc += static_cast<double>(x.f32()[((n * c_ + ci) * h_ + ih) * w_ + iw]) *
                       w.f32()[((o * cg + c) * a.kernel_h + i) * a.kernel_w + j];
              }
          y.f32()[((n * o_ + o) * oh_ + oh) * ow_ + ow] = static_cast<float>(acc);
        }
  return y;
}

Tensor iota(Shape shape, float start) {
  Tensor t(std::move(shape));
  for (std::int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = start + static_cast<float>(i);
  return t;
}

void check_gradients(const Conv2dAttrs& a, Shape x_shape, std::uint64_t seed) {
  Rng rng(seed);
  Tensor x = uniform(x_shape, rng);
  Tensor w = uniform({a.out_channels, a.in_channels / a.groups, a.kernel_h, a.kernel_w}, rng);
  Tensor b = uniform({a.out_channels}, rng);
  Tensor y(output_shape(a, x));
  Tensor r = uniform(y.shape(), rng);
  auto objective = [&] {
    conv2d_forward(a, x, w, &b, y);
    return project(y, r);
  };
  Tensor dx(x.shape()), dw(w.shape()), db(b.shape());
  conv2d_backward(a, x, w, r, &dx, &dw, &db);
  expect_gradient("dx", x, dx, objective);
  expect_gradient("dw", w, dw, objective);
  expect_gradient("db", b, db, objective);
}

}  // namespace

TEST(OpsConv2d, CrossCorrelationNotConvolution) {
  // x(i, j) = 4i + j + 1 on a 4x4 plane; the kernel picks the top-left tap and twice the
  // bottom-right one: y(i, j) = x(i, j) + 2 x(i + 2, j + 2) + bias. A flipped (true
  // convolution) kernel would give x(i + 2, j + 2) + 2 x(i, j) instead.
  Tensor x = iota({1, 1, 4, 4}, 1);
  Tensor w = f32({1, 0, 0, 0, 0, 0, 0, 0, 2}, {1, 1, 3, 3});
  Tensor b = f32({0.5f}, {1});
  Tensor y = run(conv(1, 1, 3, 3), x, w, &b);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  expect_values(y, {1 + 22 + 0.5f, 2 + 24 + 0.5f, 5 + 30 + 0.5f, 6 + 32 + 0.5f});
}

TEST(OpsConv2d, PaddingAndStrideByHand) {
  // All-ones 3x3 kernel, pad 1, stride 2 over 1..16: each output sums the in-bounds part of
  // its window; (4 + 2 - 3) / 2 + 1 = 2 outputs per axis.
  Tensor x = iota({1, 1, 4, 4}, 1);
  Tensor w({1, 1, 3, 3});
  w.fill(1.0f);
  Tensor y = run(conv(1, 1, 3, 3, 2, 1), x, w, nullptr);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  expect_values(y, {1 + 2 + 5 + 6, 2 + 3 + 4 + 6 + 7 + 8, 5 + 6 + 9 + 10 + 13 + 14,
                    6 + 7 + 8 + 10 + 11 + 12 + 14 + 15 + 16});
}

TEST(OpsConv2d, DilationByHand) {
  // x(i, j) = 5i + j on 5x5, 2x2 ones kernel with dilation 2 (a 3x3 footprint):
  // y(i, j) = x(i, j) + x(i, j+2) + x(i+2, j) + x(i+2, j+2) = 4 (5i + j) + 24.
  Tensor x = iota({1, 1, 5, 5}, 0);
  Tensor w({1, 1, 2, 2});
  w.fill(1.0f);
  Tensor y = run(conv(1, 1, 2, 2, 1, 0, 2), x, w, nullptr);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
  expect_values(y, {24, 28, 32, 44, 48, 52, 64, 68, 72});
}

TEST(OpsConv2d, GroupsByHand) {
  // Two groups of 1x1 filters: output 0 sees input channels 0-1, output 1 sees 2-3.
  Tensor x = f32({1, 2, 3, 4, 5, 6, 7, 8}, {1, 4, 1, 2});
  Tensor w = f32({1, 10, 100, 1000}, {2, 2, 1, 1});
  Tensor y = run(conv(4, 2, 1, 1, 1, 0, 1, 2), x, w, nullptr);
  expect_values(y, {1 + 30, 2 + 40, 500 + 7000, 600 + 8000});
}

TEST(OpsConv2d, DepthwiseByHand) {
  // Depthwise 3x3, pad 1: channel 0 is 1..9 under an all-ones kernel (window sums), channel 1
  // is all ones under a kernel with only its centre set to 2.
  Tensor x = f32({1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {1, 2, 3, 3});
  Tensor w = f32({1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0}, {2, 1, 3, 3});
  Tensor y = run(conv(2, 2, 3, 3, 1, 1, 1, 2), x, w, nullptr);
  expect_values(y, {12, 21, 16, 27, 45, 33, 24, 39, 28, 2, 2, 2, 2, 2, 2, 2, 2, 2});
}

TEST(OpsConv2d, MatchesDefinitionAcrossGeometries) {
  struct Case {
    Conv2dAttrs a;
    Shape x;
  };
  const Case cases[] = {
      {conv(3, 4, 3, 3, 1, 1), {2, 3, 7, 6}},
      {conv(3, 4, 3, 3, 2, 1), {2, 3, 7, 8}},
      {conv(2, 2, 5, 5, 3, 2), {1, 2, 9, 11}},
      {conv(4, 6, 3, 3, 1, 2, 2, 2), {2, 4, 6, 7}},
      {conv(6, 6, 3, 3, 2, 1, 1, 6), {2, 6, 9, 9}},   // depthwise, strided
      {conv(4, 8, 1, 1, 2, 0, 1, 4), {1, 4, 5, 5}},   // channel multiplier 2
      {conv(2, 3, 7, 7, 1, 0), {1, 2, 7, 7}},         // kernel as large as the input
      {conv(2, 3, 2, 3, 3, 1, 3), {1, 2, 8, 10}},     // stride and dilation 3
  };
  Rng rng(21);
  for (const Case& c : cases) {
    Tensor x = uniform(c.x, rng);
    Tensor w = uniform({c.a.out_channels, c.a.in_channels / c.a.groups, c.a.kernel_h,
                        c.a.kernel_w},
                       rng);
    Tensor b = uniform({c.a.out_channels}, rng);
    expect_close(run(c.a, x, w, &b), naive_conv(c.a, x, w, &b), 1e-5f);
  }
  // Asymmetric attributes per axis.
  Conv2dAttrs a = conv(3, 2, 2, 4);
  a.stride_h = 2;
  a.pad_w = 2;
  a.dilation_h = 3;
  Tensor x = uniform({2, 3, 9, 5}, rng), w = uniform({2, 3, 2, 4}, rng);
  expect_close(run(a, x, w, nullptr), naive_conv(a, x, w, nullptr), 1e-5f);
}

TEST(OpsConv2d, GradientsPlain) { check_gradients(conv(3, 4, 3, 3, 1, 1), {2, 3, 5, 5}, 31); }

TEST(OpsConv2d, GradientsStridedDilatedGroupedAsymmetric) {
  Conv2dAttrs a = conv(4, 4, 2, 3, 2, 2, 2, 2);
  a.stride_w = 1;
  a.pad_h = 1;
  check_gradients(a, {2, 4, 5, 6}, 32);
}

TEST(OpsConv2d, GradientsDepthwise) { check_gradients(conv(3, 3, 3, 3, 2, 1, 1, 3), {2, 3, 5, 5}, 33); }

TEST(OpsConv2d, GroupedEqualsConcatenatedPerGroupConvs) {
  Rng rng(41);
  const std::int64_t n = 2, c = 6, h = 5, wd = 5, o = 9, groups = 3;
  const std::int64_t cg = c / groups, og = o / groups;
  Conv2dAttrs grouped = conv(c, o, 3, 3, 1, 1, 1, groups);
  Tensor x = uniform({n, c, h, wd}, rng), w = uniform({o, cg, 3, 3}, rng), b = uniform({o}, rng);
  Tensor y = run(grouped, x, w, &b);
  Tensor dy = uniform(y.shape(), rng);
  Tensor dx(x.shape()), dw(w.shape()), db(b.shape());
  conv2d_backward(grouped, x, w, dy, &dx, &dw, &db);

  Conv2dAttrs single = conv(cg, og, 3, 3, 1, 1);
  const std::int64_t plane = h * wd;
  for (std::int64_t g = 0; g < groups; ++g) {
    // This group's input channels, filters, bias and output gradient as standalone tensors.
    Tensor xg({n, cg, h, wd}), dyg({n, og, h, wd});
    for (std::int64_t s = 0; s < n; ++s) {
      std::copy_n(x.f32() + (s * c + g * cg) * plane, cg * plane, xg.f32() + s * cg * plane);
      std::copy_n(dy.f32() + (s * o + g * og) * plane, og * plane, dyg.f32() + s * og * plane);
    }
    Tensor wg = w.slice_rows(g * og, (g + 1) * og).clone();
    Tensor bg = b.slice_rows(g * og, (g + 1) * og).clone();
    Tensor yg = run(single, xg, wg, &bg);
    Tensor dxg(xg.shape()), dwg(wg.shape()), dbg(bg.shape());
    conv2d_backward(single, xg, wg, dyg, &dxg, &dwg, &dbg);
    for (std::int64_t s = 0; s < n; ++s)
      for (std::int64_t i = 0; i < og * plane; ++i)
        EXPECT_FLOAT_EQ(y.f32()[(s * o + g * og) * plane + i], yg.f32()[s * og * plane + i]);
    for (std::int64_t s = 0; s < n; ++s)
      for (std::int64_t i = 0; i < cg * plane; ++i)
        EXPECT_FLOAT_EQ(dx.f32()[(s * c + g * cg) * plane + i], dxg.f32()[s * cg * plane + i]);
    expect_close(dw.slice_rows(g * og, (g + 1) * og), dwg, 1e-6f);
    expect_close(db.slice_rows(g * og, (g + 1) * og), dbg, 1e-6f);
  }
}

TEST(OpsConv2d, OneByOneKernelEqualsLinearOverChannels) {
  Rng rng(42);
  const std::int64_t n = 2, c = 5, h = 3, wd = 4, o = 3, plane = h * wd;
  Tensor x = uniform({n, c, h, wd}, rng), w = uniform({o, c, 1, 1}, rng), b = uniform({o}, rng);
  Tensor y = run(conv(c, o, 1, 1), x, w, &b);
  // Every pixel is a sample of a Linear with the filters as its weight rows.
  Tensor pixels({n * plane, c});
  for (std::int64_t s = 0; s < n; ++s)
    for (std::int64_t ch = 0; ch < c; ++ch)
      for (std::int64_t p = 0; p < plane; ++p)
        pixels.f32()[(s * plane + p) * c + ch] = x.f32()[(s * c + ch) * plane + p];
  Tensor lin({n * plane, o});
  linear_forward(pixels, w.reshaped({o, c}), &b, lin);
  for (std::int64_t s = 0; s < n; ++s)
    for (std::int64_t oc = 0; oc < o; ++oc)
      for (std::int64_t p = 0; p < plane; ++p)
        EXPECT_NEAR(y.f32()[(s * o + oc) * plane + p], lin.f32()[(s * plane + p) * o + oc], 1e-5f);
}

TEST(OpsConv2d, LargeBatchGradientsAgreeWithDefinition) {
  // Enough work to use every thread; dw and db against the definition in double.
  Rng rng(43);
  Conv2dAttrs a = conv(8, 8, 3, 3, 1, 1);
  Tensor x = uniform({16, 8, 12, 12}, rng), w = uniform({8, 8, 3, 3}, rng);
  Tensor dy = uniform({16, 8, 12, 12}, rng);
  Tensor dw(w.shape()), db({8});
  conv2d_backward(a, x, w, dy, nullptr, &dw, &db);
  for (std::int64_t o = 0; o < 8; o += 3)
    for (std::int64_t c = 0; c < 8; c += 3) {
      const std::int64_t i = 0, j = 2;  // a corner tap: clipped on two sides
      double acc = 0.0;
      for (std::int64_t n = 0; n < 16; ++n)
        for (std::int64_t oh = 0; oh < 12; ++oh)
          for (std::int64_t ow = 0; ow < 12; ++ow) {
            const std::int64_t ih = oh - 1 + i, iw = ow - 1 + j;
            if (ih < 0 || ih >= 12 || iw < 0 || iw >= 12) continue;
            acc += static_cast<double>(dy.f32()[((n * 8 + o) * 12 + oh) * 12 + ow]) *
                   x.f32()[((n * 8 + c) * 12 + ih) * 12 + iw];
          }
      EXPECT_NEAR(dw.f32()[((o * 8 + c) * 3 + i) * 3 + j], acc, 1e-3);
    }
  double sum0 = 0.0;
  for (std::int64_t n = 0; n < 16; ++n)
    for (std::int64_t p = 0; p < 144; ++p) sum0 += dy.f32()[(n * 8) * 144 + p];
  EXPECT_NEAR(db.f32()[0], sum0, 1e-3);
}
