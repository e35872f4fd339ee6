// Samples fitted to a model's input (train/data/fit.hpp), against values derived by hand:
// bilinear resizing with PyTorch's align_corners=False rule (source coordinate
// (o + 0.5)·in/out − 0.5, clamped at 0), centring in zeros, and one channel replicated.
#include "train/data/fit.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "core/error.hpp"

using namespace telar;
using namespace telar::train;

namespace {

Dataset images(const Shape& sample, const std::vector<float>& values, std::int64_t n = 1) {
  Dataset d;
  d.name = "hand-made";
  Shape shape{n};
  shape.insert(shape.end(), sample.begin(), sample.end());
  d.images = Tensor(shape);
  for (std::int64_t i = 0; i < d.images.numel(); ++i)
    d.images.f32()[i] = values[static_cast<std::size_t>(i) % values.size()];
  d.labels = Tensor({n}, DType::I64);
  d.num_classes = 1;
  return d;
}

TEST(FitSamples, BilinearUpsamplingFollowsPyTorchsAlignCornersFalse) {
  // [[0, 1], [2, 3]] to 4x4: along each axis the outputs read sources -0.25 (clamped to 0),
  // 0.25, 0.75 and 1.25 (both neighbours 1), i.e. weights f = 0, 0.25, 0.75, 1 of the second
  // row/column, so out[y][x] = 2 f[y] + f[x].
  const Dataset d = fit_samples(images({1, 2, 2}, {0, 1, 2, 3}), {1, 4, 4}, FitMode::Resize);
  ASSERT_EQ(d.images.shape(), (Shape{1, 1, 4, 4}));
  const float f[] = {0.0f, 0.25f, 0.75f, 1.0f};
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x)
      EXPECT_FLOAT_EQ(d.images.f32()[y * 4 + x], 2 * f[y] + f[x]) << y << "," << x;
}

TEST(FitSamples, BilinearDownsamplingAveragesNeighbours) {
  // 1x1x4 [0, 1, 2, 3] to 1x1x2: sources 0.5 and 2.5.
  const Dataset d = fit_samples(images({1, 1, 4}, {0, 1, 2, 3}), {1, 1, 2}, FitMode::Resize);
  EXPECT_FLOAT_EQ(d.images.f32()[0], 0.5f);
  EXPECT_FLOAT_EQ(d.images.f32()[1], 2.5f);
}

TEST(FitSamples, PaddingCentresTheImageInZerosAndOneChannelIsReplicated) {
  // 1x2x2 [[1, 2], [3, 4]] into 3x4x5: one row above ((4-2)/2), one column left ((5-2)/2).
  const Dataset d = fit_samples(images({1, 2, 2}, {1, 2, 3, 4}, 2), {3, 4, 5}, FitMode::Pad);
  ASSERT_EQ(d.images.shape(), (Shape{2, 3, 4, 5}));
  for (std::int64_t sample = 0; sample < 2; ++sample)
    for (int c = 0; c < 3; ++c) {
      const float* p = d.images.f32() + sample * 60 + c * 20;
      float sum = 0;
      for (int i = 0; i < 20; ++i) sum += p[i];
      EXPECT_FLOAT_EQ(sum, 10.0f);
      EXPECT_FLOAT_EQ(p[1 * 5 + 1], 1.0f);
      EXPECT_FLOAT_EQ(p[1 * 5 + 2], 2.0f);
      EXPECT_FLOAT_EQ(p[2 * 5 + 1], 3.0f);
      EXPECT_FLOAT_EQ(p[2 * 5 + 2], 4.0f);
    }
}

TEST(FitSamples, SameShapeIsTheDataItselfAndWhatCannotBeFittedIsAnError) {
  const Dataset d = images({1, 2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(fit_samples(d, {1, 2, 2}, FitMode::Pad).images.raw(), d.images.raw());
  EXPECT_THROW(fit_samples(images({2, 2, 2}, {1}), {3, 2, 2}, FitMode::Resize), Error);
  EXPECT_THROW(fit_samples(d, {1, 1, 4}, FitMode::Pad), Error);  // taller than the input
  EXPECT_THROW(fit_samples(images({4}, {1}), {1, 2, 2}, FitMode::Resize), Error);
  EXPECT_EQ(parse_fit_mode("pad", "--fit"), FitMode::Pad);
  EXPECT_THROW(parse_fit_mode("crop", "--fit"), Error);
}

}  // namespace
