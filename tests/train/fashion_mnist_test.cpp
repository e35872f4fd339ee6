// Facts about the real Fashion-MNIST files (Debian's dataset-fashion-mnist), checked against the
// published description of the data set and against the bytes of the files themselves.
#include <gtest/gtest.h>

#include <filesystem>

#include "train/data/mnist.hpp"

using namespace telar;
using namespace telar::train;

namespace {

bool have_fashion_mnist(DataSplit split) {
  return std::filesystem::exists(fashion_mnist_images_path(kFashionMnistDir, split)) &&
         std::filesystem::exists(fashion_mnist_labels_path(kFashionMnistDir, split));
}

#define SKIP_WITHOUT_FASHION_MNIST(split)                                     \
  if (!have_fashion_mnist(split))                                             \
  GTEST_SKIP() << "Fashion-MNIST is not installed under " << kFashionMnistDir \
               << " (scripts/setup.sh installs the Debian package dataset-fashion-mnist)"

}  // namespace

TEST(FashionMnist, TrainSplit) {
  SKIP_WITHOUT_FASHION_MNIST(DataSplit::Train);
  Dataset train = load_fashion_mnist(DataSplit::Train);
  EXPECT_EQ(train.name, "fashion-mnist/train");
  EXPECT_EQ(train.images.shape(), (Shape{60000, 1, 28, 28}));
  EXPECT_EQ(train.labels.shape(), (Shape{60000}));
  EXPECT_EQ(train.num_classes, 10);
  // The first training labels are 9 (ankle boot), 0, 0, 3, 0, 2, 7, 2.
  const std::int64_t first_labels[] = {9, 0, 0, 3, 0, 2, 7, 2};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(train.labels.data<std::int64_t>()[i], first_labels[i]);
  // The classes are balanced: 6,000 images each.
  for (std::int64_t count : class_counts(train)) EXPECT_EQ(count, 6000);
  // The first image's pixel bytes sum to 76,247; its brightest pixel (255) is byte 417.
  double sum = 0.0;
  const float* first = train.images.f32();
  for (int i = 0; i < 784; ++i) {
    sum += first[i];
    EXPECT_GE(first[i], 0.0f);
    EXPECT_LE(first[i], 1.0f);
  }
  EXPECT_NEAR(sum * 255.0, 76247.0, 1e-2);
  EXPECT_EQ(first[417], 1.0f);
}

TEST(FashionMnist, TestSplit) {
  SKIP_WITHOUT_FASHION_MNIST(DataSplit::Test);
  Dataset test = load_fashion_mnist(DataSplit::Test);
  EXPECT_EQ(test.name, "fashion-mnist/test");
  EXPECT_EQ(test.images.shape(), (Shape{10000, 1, 28, 28}));
  EXPECT_EQ(test.num_classes, 10);
  const std::int64_t first_labels[] = {9, 2, 1, 1, 6, 1, 4, 6};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(test.labels.data<std::int64_t>()[i], first_labels[i]);
  for (std::int64_t count : class_counts(test)) EXPECT_EQ(count, 1000);
}
