// Samples fitted to a model's input (train/data/fit.hpp), against values derived by hand:
// bilinear resizing with PyTorch's align_corners=False rule (source coordinate
// (o + 0.5)·in/out − 0.5, clamped at 0), centring in zeros, and one channel replicated.
#include "train/data/fit.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "core/error.hpp"
#include "train/data/data_loader.hpp"

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

// Sample `index` of `d` as it is read.
std::vector<float> read(const Dataset& d, std::int64_t index = 0) {
  std::vector<float> out(static_cast<std::size_t>(d.sample_numel()));
  d.read_sample(index, out.data());
  return out;
}

TEST(FitSamples, BilinearUpsamplingFollowsPyTorchsAlignCornersFalse) {
  // [[0, 1], [2, 3]] to 4x4: along each axis the outputs read sources -0.25 (clamped to 0),
  // 0.25, 0.75 and 1.25 (both neighbours 1), i.e. weights f = 0, 0.25, 0.75, 1 of the second
  // row/column, so out[y][x] = 2 f[y] + f[x].
  const Dataset d = fit_samples(images({1, 2, 2}, {0, 1, 2, 3}), {1, 4, 4}, FitMode::Resize);
  ASSERT_EQ(d.sample_shape(), (Shape{1, 4, 4}));
  const std::vector<float> out = read(d);
  ASSERT_EQ(out.size(), 16u);
  const float f[] = {0.0f, 0.25f, 0.75f, 1.0f};
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x)
      EXPECT_FLOAT_EQ(out[static_cast<std::size_t>(y * 4 + x)], 2 * f[y] + f[x]) << y << "," << x;
}

TEST(FitSamples, BilinearDownsamplingAveragesNeighbours) {
  // 1x1x4 [0, 1, 2, 3] to 1x1x2: sources 0.5 and 2.5.
  const Dataset d = fit_samples(images({1, 1, 4}, {0, 1, 2, 3}), {1, 1, 2}, FitMode::Resize);
  EXPECT_EQ(read(d), (std::vector<float>{0.5f, 2.5f}));
}

TEST(FitSamples, PaddingCentresTheImageInZerosAndOneChannelIsReplicated) {
  // 1x2x2 [[1, 2], [3, 4]] into 3x4x5: one row above ((4-2)/2), one column left ((5-2)/2).
  const Dataset d = fit_samples(images({1, 2, 2}, {1, 2, 3, 4}, 2), {3, 4, 5}, FitMode::Pad);
  ASSERT_EQ(d.sample_shape(), (Shape{3, 4, 5}));
  for (std::int64_t sample = 0; sample < 2; ++sample)
    for (int c = 0; c < 3; ++c) {
      const std::vector<float> all = read(d, sample);
      const float* p = all.data() + c * 20;
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
  EXPECT_EQ(fit_samples(d, {1, 2, 2}, FitMode::Pad).fit, nullptr);
  EXPECT_THROW(fit_samples(images({2, 2, 2}, {1}), {3, 2, 2}, FitMode::Resize), Error);
  EXPECT_THROW(fit_samples(d, {1, 1, 4}, FitMode::Pad), Error);  // taller than the input
  EXPECT_THROW(fit_samples(images({4}, {1}), {1, 2, 2}, FitMode::Resize), Error);
  EXPECT_EQ(parse_fit_mode("pad", "--fit"), FitMode::Pad);
  EXPECT_THROW(parse_fit_mode("crop", "--fit"), Error);
}

// The samples stay as loaded (shared, not copied) and are fitted as they are read: by a
// subset, by the loader's batches (rows split across threads), a fit of a fit starting again
// from the stored samples.
TEST(FitSamples, SamplesAreFittedAsTheyAreReadIntoBatches) {
  const Dataset stored = images({1, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}, 2);
  const Dataset d = fit_samples(stored, {3, 4, 4}, FitMode::Resize);
  EXPECT_EQ(d.images.raw(), stored.images.raw());
  EXPECT_EQ(d.stored_sample_shape(), (Shape{1, 2, 2}));
  EXPECT_EQ(d.sample_numel(), 48);
  // Sample 1 is [[4, 5], [6, 7]]: 4 + (2 f[y] + f[x]) in every channel.
  const float f[] = {0.0f, 0.25f, 0.75f, 1.0f};
  const std::vector<float> one = read(d, 1);
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x)
        EXPECT_FLOAT_EQ(one[static_cast<std::size_t>(c * 16 + y * 4 + x)], 4 + 2 * f[y] + f[x]);
  const std::int64_t second[] = {1};
  EXPECT_EQ(read(subset(d, second, "second")), one);
  DataLoader loader(d, {.batch_size = 2, .shuffle = false});
  const Batch& b = loader.batch(0, 0);
  ASSERT_EQ(b.images.shape(), (Shape{2, 3, 4, 4}));
  EXPECT_EQ(std::vector<float>(b.images.f32() + 48, b.images.f32() + 96), one);
  EXPECT_EQ(std::vector<float>(b.images.f32(), b.images.f32() + 48), read(d, 0));
  // From the 2x2 samples: one row, the mean of the two (source 0.5), the columns as they are.
  const Dataset again = fit_samples(d, {1, 1, 2}, FitMode::Resize);
  EXPECT_EQ(read(again, 1), (std::vector<float>{5.0f, 6.0f}));
}

}  // namespace
