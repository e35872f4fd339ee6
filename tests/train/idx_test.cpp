#include "train/data/idx.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <vector>

#include "test_support.hpp"
#include "train/data/mnist.hpp"

using namespace telar;
using namespace telar::train;
using telar::train::testing::expect_error;
using telar::train::testing::idx_bytes;
using telar::train::testing::TempDir;
using telar::train::testing::write_gzip;
using telar::train::testing::write_plain;

namespace {

// Pixels of two 2x3 images: 68, 85, ..., 255 (steps of 17, so that 255 appears).
std::vector<std::uint8_t> tiny_pixels() {
  std::vector<std::uint8_t> p(12);
  for (int i = 0; i < 12; ++i)
    p[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i * 17 + 68);
  return p;  // 68 .. 255
}

}  // namespace

TEST(Idx, ReadsPlainAndGzipFilesAlike) {
  TempDir dir("idx_plain_gz");
  const auto images = idx_bytes(kIdxImagesMagic, {2, 2, 3}, tiny_pixels());
  write_plain(dir / "images", images);
  write_gzip(dir / "images.gz", images);
  for (const char* name : {"images", "images.gz"}) {
    IdxImages read = read_idx_images(dir / name);
    EXPECT_EQ(read.count, 2);
    EXPECT_EQ(read.rows, 2);
    EXPECT_EQ(read.cols, 3);
    EXPECT_EQ(read.pixels, tiny_pixels()) << name;
  }
}

TEST(Idx, MnistPairBecomesScaledImagesAndLabels) {
  TempDir dir("idx_pair");
  write_gzip(dir / "img.gz", idx_bytes(kIdxImagesMagic, {2, 2, 3}, tiny_pixels()));
  write_plain(dir / "lbl", idx_bytes(kIdxLabelsMagic, {2}, {1, 0}));
  Dataset data = load_mnist_format(dir / "img.gz", dir / "lbl", "tiny", 2);
  EXPECT_EQ(data.name, "tiny");
  EXPECT_EQ(data.num_classes, 2);
  EXPECT_EQ(data.images.shape(), (Shape{2, 1, 2, 3}));
  EXPECT_EQ(data.images.dtype(), DType::F32);
  EXPECT_EQ(data.labels.dtype(), DType::I64);
  EXPECT_FLOAT_EQ(data.images.f32()[0], 68.0f / 255.0f);
  EXPECT_EQ(data.images.f32()[11], 1.0f);  // 255 maps exactly to 1
  EXPECT_EQ(data.labels.data<std::int64_t>()[0], 1);
  EXPECT_EQ(data.labels.data<std::int64_t>()[1], 0);
  EXPECT_NO_THROW(data.validate());
}

TEST(Idx, MissingFileNamesThePathAndTheSetupScript) {
  TempDir dir("idx_missing");
  expect_error(
      [&] { read_idx_images(dir / "nope.gz"); },
      {(dir / "nope.gz").string(), "does not exist", "scripts/setup.sh", "dataset-fashion-mnist"});
  expect_error([&] { load_fashion_mnist(dir.path(), DataSplit::Train); },
               {"train-labels-idx1-ubyte.gz", "scripts/setup.sh"});
}

TEST(Idx, TruncatedPlainFileSaysExpectedAndActualBytes) {
  TempDir dir("idx_trunc");
  const auto bytes = idx_bytes(kIdxImagesMagic, {2, 2, 3}, tiny_pixels());
  // 16 header + 12 pixels = 28 expected, 23 present. (Copied rather than resized: g++ 12 at
  // -O1 with sanitizers warns falsely about resize here.)
  write_plain(dir / "img", std::vector<std::uint8_t>(bytes.begin(), bytes.end() - 5));
  expect_error([&] { read_idx_images(dir / "img"); }, {"truncated", "expected 28 bytes, found 23"});
  write_plain(dir / "short_header", {0, 0, 8, 3, 0, 0});
  expect_error([&] { read_idx_images(dir / "short_header"); },
               {"truncated", "expected 16 bytes, found 6"});
}

TEST(Idx, CutGzipStreamIsReportedAsTruncated) {
  TempDir dir("idx_cutgz");
  // Enough varied data that the compressed stream is long, then cut it in half.
  std::vector<std::uint8_t> pixels(100 * 28 * 28);
  for (std::size_t i = 0; i < pixels.size(); ++i)
    pixels[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 13);
  write_gzip(dir / "full.gz", idx_bytes(kIdxImagesMagic, {100, 28, 28}, pixels));
  std::ifstream in(dir / "full.gz", std::ios::binary);
  std::vector<char> gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::uint8_t> half(gz.begin(),
                                 gz.begin() + static_cast<std::ptrdiff_t>(gz.size() / 2));
  write_plain(dir / "cut.gz", half);
  expect_error([&] { read_idx_images(dir / "cut.gz"); },
               {"truncated", "expected 78416 bytes", "cut.gz"});
}

TEST(Idx, WrongMagicPrintsFoundAndExpectedInHex) {
  TempDir dir("idx_magic");
  write_plain(dir / "labels", idx_bytes(kIdxLabelsMagic, {2}, {1, 0}));
  expect_error([&] { read_idx_images(dir / "labels"); },
               {"magic number 0x00000801", "expected 0x00000803"});
  write_plain(dir / "text", {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'});
  expect_error([&] { read_idx_labels(dir / "text"); },
               {"0x68656C6C", "expected 0x00000801", "not an MNIST-format IDX file"});
}

TEST(Idx, ExtraBytesAfterTheArrayAreRejected) {
  TempDir dir("idx_extra");
  auto bytes = idx_bytes(kIdxLabelsMagic, {2}, {1, 0});
  bytes.push_back(7);
  write_plain(dir / "labels", bytes);
  expect_error([&] { read_idx_labels(dir / "labels"); }, {"longer than its header", "10 bytes"});
}

TEST(Idx, LabelAndImageCountMismatch) {
  TempDir dir("idx_count");
  write_plain(dir / "img", idx_bytes(kIdxImagesMagic, {2, 2, 3}, tiny_pixels()));
  write_plain(dir / "lbl", idx_bytes(kIdxLabelsMagic, {3}, {1, 0, 1}));
  expect_error([&] { load_mnist_format(dir / "img", dir / "lbl", "t", 10); },
               {"holds 2 images", "holds 3 labels"});
}

TEST(Idx, LabelOutOfRange) {
  TempDir dir("idx_range");
  write_plain(dir / "img", idx_bytes(kIdxImagesMagic, {2, 2, 3}, tiny_pixels()));
  write_plain(dir / "lbl", idx_bytes(kIdxLabelsMagic, {2}, {1, 12}));
  expect_error([&] { load_mnist_format(dir / "img", dir / "lbl", "t", 10); },
               {"label 12 of sample 1", "[0, 10)"});
}

TEST(Idx, HugeDeclaredSizeOnAShortFileFailsWithoutAllocatingIt) {
  TempDir dir("idx_huge");
  // 4e9 x 256 x 256 declared, 3 pixels present.
  write_plain(dir / "img", idx_bytes(kIdxImagesMagic, {4000000000u, 256, 256}, {1, 2, 3}));
  expect_error([&] { read_idx_images(dir / "img"); }, {"too large"});
  write_plain(dir / "img2", idx_bytes(kIdxImagesMagic, {1000000, 28, 28}, {1, 2, 3}));
  expect_error([&] { read_idx_images(dir / "img2"); },
               {"truncated", "expected 784000016 bytes, found 19"});
}

TEST(Idx, DataSplitNames) {
  EXPECT_EQ(parse_data_split("train"), DataSplit::Train);
  EXPECT_EQ(parse_data_split("test"), DataSplit::Test);
  expect_error([] { parse_data_split("validation"); }, {"validation", "train or test"});
}
