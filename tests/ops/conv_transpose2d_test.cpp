// ConvTranspose2d against its definition as a scatter (each input element adds its value times
// the filter into the output window it maps to), written here independently of the Conv2d
// kernels it is built on; gradients against finite differences.
#include <gtest/gtest.h>

#include "ops/kernels.hpp"
#include "test_util.hpp"

using namespace telar;
using namespace telar::ops;
using namespace telar::ops::testing;
using graph::ConvTranspose2dAttrs;

namespace {

ConvTranspose2dAttrs deconv(std::int64_t c, std::int64_t o, std::int64_t k, std::int64_t stride,
                            std::int64_t pad, std::int64_t dilation = 1, std::int64_t groups = 1,
                            std::int64_t output_padding = 0) {
  ConvTranspose2dAttrs a;
  a.in_channels = c;
  a.out_channels = o;
  a.kernel_h = a.kernel_w = k;
  a.stride_h = a.stride_w = stride;
  a.pad_h = a.pad_w = pad;
  a.dilation_h = a.dilation_w = dilation;
  a.groups = groups;
  a.output_padding_h = a.output_padding_w = output_padding;
  return a;
}

Shape output_shape(const ConvTranspose2dAttrs& a, const Tensor& x) {
  auto size = [&](std::int64_t in, std::int64_t op) {
    return (in - 1) * a.stride_h - 2 * a.pad_h + a.dilation_h * (a.kernel_h - 1) + op + 1;
  };
  return {x.dim(0), a.out_channels, size(x.dim(2), a.output_padding_h),
          size(x.dim(3), a.output_padding_w)};
}

// The definition: y[n, o, h s - p + i d, w s - p + j d] += x[n, c, h, w] * w[c, o - group o0, i,
// j].
Tensor scatter(const ConvTranspose2dAttrs& a, const Tensor& x, const Tensor& w, const Tensor* b) {
  Tensor y(output_shape(a, x));
  const std::int64_t n_ = x.dim(0), c_ = x.dim(1), h_ = x.dim(2), w_ = x.dim(3);
  const std::int64_t oh_ = y.dim(2), ow_ = y.dim(3), o_ = a.out_channels;
  const std::int64_t cg = c_ / a.groups, og = o_ / a.groups;
  std::vector<double> acc(static_cast<std::size_t>(y.numel()), 0.0);
  for (std::int64_t n = 0; n < n_; ++n)
    for (std::int64_t c = 0; c < c_; ++c)
      for (std::int64_t h = 0; h < h_; ++h)
        for (std::int64_t wi = 0; wi < w_; ++wi)
          for (std::int64_t ol = 0; ol < og; ++ol)
            for (std::int64_t i = 0; i < a.kernel_h; ++i)
              for (std::int64_t j = 0; j < a.kernel_w; ++j) {
                const std::int64_t oh = h * a.stride_h - a.pad_h + i * a.dilation_h;
                const std::int64_t ow = wi * a.stride_w - a.pad_w + j * a.dilation_w;
                if (oh < 0 || oh >= oh_ || ow < 0 || ow >= ow_) continue;
                const std::int64_t o = (c / cg) * og + ol;
                acc[static_cast<std::size_t>(((n * o_ + o) * oh_ + oh) * ow_ + ow)] +=
                    static_cast<double>(x.f32()[((n * c_ + c) * h_ + h) * w_ + wi]) *
                    w.f32()[((c * og + ol) * a.kernel_h + i) * a.kernel_w + j];
              }
  for (std::int64_t k = 0; k < y.numel(); ++k)
    y.f32()[k] = static_cast<float>(acc[static_cast<std::size_t>(k)] +
                                    (b ? b->f32()[(k / (oh_ * ow_)) % o_] : 0.0f));
  return y;
}

Tensor run(const ConvTranspose2dAttrs& a, const Tensor& x, const Tensor& w, const Tensor* b) {
  Tensor y(output_shape(a, x));
  conv_transpose2d_forward(a, x, w, b, y);
  return y;
}

}  // namespace

TEST(OpsConvTranspose2d, StrideTwoStampsTheFilterByHand) {
  // Each input pixel stamps its value times the 2x2 filter into its own 2x2 block.
  const Tensor x = f32({1, 2, 3, 4}, {1, 1, 2, 2});
  const Tensor w = f32({1, 10, 100, 1000}, {1, 1, 2, 2});
  const Tensor b = f32({0.5f}, {1});
  expect_values(run(deconv(1, 1, 2, 2, 0), x, w, &b), {1.5f, 10.5f, 2.5f, 20.5f,          //
                                                       100.5f, 1000.5f, 200.5f, 2000.5f,  //
                                                       3.5f, 30.5f, 4.5f, 40.5f,          //
                                                       300.5f, 3000.5f, 400.5f, 4000.5f});
  // Stride 1, pad 1 of a 3x3 filter of ones: each output sums the input's 3x3 neighbourhood.
  const Tensor ones = f32({1, 1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 3, 3});
  expect_values(run(deconv(1, 1, 3, 1, 1), x, ones, nullptr), {10, 10, 10, 10});
}

TEST(OpsConvTranspose2d, MatchesTheScatterDefinitionAcrossGeometries) {
  Rng rng(71);
  struct Case {
    ConvTranspose2dAttrs a;
    Shape x;
  };
  const std::vector<Case> cases = {
      {deconv(3, 4, 3, 1, 0), {2, 3, 4, 5}},
      {deconv(4, 6, 3, 2, 1, 1, 2, 1), {2, 4, 3, 4}},  // groups, output padding
      {deconv(2, 3, 2, 3, 0, 2, 1, 2), {1, 2, 3, 3}},  // dilation, stride 3
      {deconv(4, 4, 3, 2, 1, 1, 4), {2, 4, 5, 5}},     // depthwise
  };
  for (const Case& c : cases) {
    const Tensor x = uniform(c.x, rng);
    const Tensor w =
        uniform({c.a.in_channels, c.a.out_channels / c.a.groups, c.a.kernel_h, c.a.kernel_w}, rng);
    const Tensor b = uniform({c.a.out_channels}, rng);
    expect_close(run(c.a, x, w, &b), scatter(c.a, x, w, &b), 1e-5f);
  }
}

TEST(OpsConvTranspose2d, GradientsMatchFiniteDifferences) {
  Rng rng(72);
  const ConvTranspose2dAttrs a = deconv(4, 6, 3, 2, 1, 1, 2, 1);
  Tensor x = uniform({2, 4, 3, 3}, rng), w = uniform({4, 3, 3, 3}, rng), b = uniform({6}, rng);
  const Tensor r = uniform(output_shape(a, x), rng);
  auto objective = [&] { return project(run(a, x, w, &b), r); };
  Tensor dx(x.shape()), dw(w.shape()), db(b.shape());
  conv_transpose2d_backward(a, x, w, r, &dx, &dw, &db);
  expect_gradient("dx", x, dx, objective);
  expect_gradient("dw", w, dw, objective);
  expect_gradient("db", b, db, objective);
}
