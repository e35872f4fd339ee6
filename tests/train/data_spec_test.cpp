#include "train/data/data_spec.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"
#include "train/data/idx.hpp"

using namespace telar;
using namespace telar::train;
using telar::train::testing::expect_error;
using telar::train::testing::idx_bytes;
using telar::train::testing::TempDir;
using telar::train::testing::write_gzip;
using telar::train::testing::write_plain;

TEST(DataSpec, SyntheticDefaultsAndArguments) {
  Dataset train = load_dataset("synthetic", DataSplit::Train, 1);
  EXPECT_EQ(train.images.shape(), (Shape{4096, 1, 28, 28}));
  EXPECT_EQ(train.num_classes, 10);
  EXPECT_EQ(train.name, "synthetic/train");
  Dataset test = load_dataset("synthetic:100:3x4x4:5", DataSplit::Test, 1);
  EXPECT_EQ(test.images.shape(), (Shape{20, 3, 4, 4}));
  EXPECT_EQ(test.num_classes, 5);
  EXPECT_EQ(load_dataset("synthetic:50:12", DataSplit::Train).images.shape(), (Shape{50, 12}));
}

TEST(DataSpec, MnistFormatDirectoryWithPlainOrGzipFiles) {
  TempDir dir("data_spec_mnist");
  std::vector<std::uint8_t> pixels(3 * 2 * 2, 51);
  write_plain(dir / "train-images-idx3-ubyte", idx_bytes(kIdxImagesMagic, {3, 2, 2}, pixels));
  write_gzip(dir / "train-labels-idx1-ubyte.gz", idx_bytes(kIdxLabelsMagic, {3}, {0, 9, 4}));
  Dataset d = load_dataset("mnist:" + dir.path().string(), DataSplit::Train);
  EXPECT_EQ(d.images.shape(), (Shape{3, 1, 2, 2}));
  EXPECT_FLOAT_EQ(d.images.f32()[0], 0.2f);
  EXPECT_EQ(d.labels.data<std::int64_t>()[1], 9);
  expect_error([&] { load_dataset("mnist:" + dir.path().string(), DataSplit::Test); },
               {"t10k-labels-idx1-ubyte.gz", "does not exist"});
}

TEST(DataSpec, UnknownOrMalformedSpecs) {
  expect_error([] { load_dataset("fashion_mnist", DataSplit::Train); },
               {"unknown data set 'fashion_mnist'", "did you mean 'fashion-mnist'", "synthetic"});
  expect_error([] { load_dataset("cifar10", DataSplit::Train); }, {"use one of: fashion-mnist"});
  expect_error([] { load_dataset("synthetic:many", DataSplit::Train); }, {"'many'"});
  expect_error([] { load_dataset("synthetic:2", DataSplit::Train); }, {"at least 5 samples"});
  expect_error([] { load_dataset("mnist", DataSplit::Train); }, {"give the directory"});
}
