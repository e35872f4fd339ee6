#include "train/data/synthetic.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "test_support.hpp"

using namespace telar;
using namespace telar::train;
using telar::train::testing::expect_error;

namespace {
bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}
}  // namespace

TEST(Synthetic, ShapesLabelsAndBalance) {
  SyntheticSpec spec;
  spec.samples = 30;
  spec.sample_shape = {3, 4, 5};
  spec.num_classes = 3;
  Dataset d = make_synthetic_classification(spec);
  EXPECT_EQ(d.images.shape(), (Shape{30, 3, 4, 5}));
  EXPECT_EQ(d.labels.shape(), (Shape{30}));
  EXPECT_EQ(d.num_classes, 3);
  EXPECT_EQ(class_counts(d), (std::vector<std::int64_t>{10, 10, 10}));
  EXPECT_NO_THROW(d.validate());

  spec.sample_shape = {7};  // plain feature vectors
  EXPECT_EQ(make_synthetic_classification(spec).images.shape(), (Shape{30, 7}));
}

TEST(Synthetic, SameSeedSameDataOtherSeedOtherData) {
  SyntheticSpec spec;
  spec.samples = 64;
  spec.seed = 11;
  Dataset a = make_synthetic_classification(spec);
  Dataset b = make_synthetic_classification(spec);
  EXPECT_TRUE(same_bytes(a.images, b.images));
  EXPECT_TRUE(same_bytes(a.labels, b.labels));
  spec.seed = 12;
  EXPECT_FALSE(same_bytes(a.images, make_synthetic_classification(spec).images));
  spec.seed = 11;
  EXPECT_FALSE(same_bytes(a.images, make_synthetic_classification(spec, 1).images));
}

// With the noise at zero every sample is its class prototype, so samples of one class are
// identical and those of different classes are not.
TEST(Synthetic, ZeroNoiseGivesThePrototypes) {
  SyntheticSpec spec;
  spec.samples = 8;
  spec.sample_shape = {16};
  spec.num_classes = 4;
  spec.noise = 0.0f;
  Dataset d = make_synthetic_classification(spec);
  const float* x = d.images.f32();
  EXPECT_EQ(std::memcmp(x, x + 4 * 16, 16 * sizeof(float)), 0);  // samples 0 and 4: class 0
  EXPECT_NE(std::memcmp(x, x + 1 * 16, 16 * sizeof(float)), 0);  // class 0 vs class 1
}

// Learnable: a nearest-class-mean classifier fitted on one set classifies a second set made
// from the same prototypes with fresh noise almost perfectly.
TEST(Synthetic, NearestMeanClassifierSeparatesTheClasses) {
  SyntheticSpec spec;
  spec.samples = 400;
  spec.sample_shape = {1, 4, 4};
  spec.num_classes = 5;
  spec.noise = 0.5f;
  spec.seed = 3;
  Dataset train = make_synthetic_classification(spec, 0);
  Dataset test = make_synthetic_classification(spec, 1);
  const std::int64_t f = 16, c = 5;
  std::vector<double> mean(static_cast<std::size_t>(c * f), 0.0);
  for (std::int64_t i = 0; i < train.size(); ++i) {
    const std::int64_t y = train.labels.data<std::int64_t>()[i];
    for (std::int64_t k = 0; k < f; ++k)
      mean[static_cast<std::size_t>(y * f + k)] += train.images.f32()[i * f + k] / (400.0 / 5);
  }
  int correct = 0;
  for (std::int64_t i = 0; i < test.size(); ++i) {
    std::int64_t best = -1;
    double best_distance = 1e300;
    for (std::int64_t y = 0; y < c; ++y) {
      double distance = 0.0;
      for (std::int64_t k = 0; k < f; ++k) {
        const double diff =
            test.images.f32()[i * f + k] - mean[static_cast<std::size_t>(y * f + k)];
        distance += diff * diff;
      }
      if (distance < best_distance) best_distance = distance, best = y;
    }
    correct += best == test.labels.data<std::int64_t>()[i];
  }
  EXPECT_GE(correct, 390);
}

TEST(Synthetic, BadSpecsAreClearErrors) {
  SyntheticSpec spec;
  spec.samples = 0;
  expect_error([&] { make_synthetic_classification(spec); }, {"0 samples"});
  spec = {};
  spec.num_classes = 0;
  expect_error([&] { make_synthetic_classification(spec); }, {"0 classes"});
  spec = {};
  spec.sample_shape = {3, 0};
  expect_error([&] { make_synthetic_classification(spec); }, {"sample shape"});
}
