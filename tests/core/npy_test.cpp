// NumPy .npy files: round trips, the layout NumPy writes (checked byte by byte for a small
// array), and the files telar refuses.
#include "core/npy.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "../train/test_support.hpp"
#include "core/error.hpp"

namespace telar {
namespace {

namespace fs = std::filesystem;

// A file in this test process's temporary directory (removed at exit).
fs::path temp(const std::string& name) {
  static const train::testing::TempDir dir("npy");
  return dir / name;
}

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(Npy, RoundTripKeepsShapeAndValues) {
  const Tensor t = Tensor::from(std::vector<float>{1.5f, -2, 3, 4, 5, 6}, {2, 1, 3});
  write_npy(temp("a.npy"), t);
  const Tensor r = read_npy(temp("a.npy"));
  EXPECT_EQ(r.shape(), t.shape());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(r.f32()[i], t.f32()[i]);
}

// What numpy.save(np.array([1, 2], dtype=np.float32)) writes: the magic, version 1.0, a header
// padded with spaces so that the data starts at byte 128, then the little-endian floats.
TEST(Npy, WritesNumPysLayout) {
  write_npy(temp("b.npy"), Tensor::from(std::vector<float>{1, 2}, {2}));
  const std::string b = read_bytes(temp("b.npy"));
  ASSERT_EQ(b.size(), 128u + 8u);
  EXPECT_EQ(b.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(static_cast<unsigned char>(b[8]) | static_cast<unsigned char>(b[9]) << 8, 118);
  EXPECT_NE(b.find("'descr': '<f4', 'fortran_order': False, 'shape': (2,)"), std::string::npos);
  EXPECT_EQ(b[127], '\n');
  float v[2];
  std::memcpy(v, b.data() + 128, 8);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], 2.0f);
}

TEST(Npy, ReadsFloat64AndConvertsIt) {
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size());
  file += '\0';
  file += header;
  const double d[2] = {0.25, -8.0};
  file.append(reinterpret_cast<const char*>(d), 16);
  std::ofstream(temp("c.npy"), std::ios::binary) << file;
  const Tensor t = read_npy(temp("c.npy"));
  EXPECT_EQ(t.shape(), (Shape{2, 1}));
  EXPECT_EQ(t.f32()[0], 0.25f);
  EXPECT_EQ(t.f32()[1], -8.0f);
}

TEST(Npy, RefusesWhatItCannotRead) {
  auto expect_refused = [](const fs::path& p, const std::string& fragment) {
    train::testing::expect_error([&] { read_npy(p); }, {fragment});
  };
  std::ofstream(temp("text.npy")) << "not numpy";
  expect_refused(temp("text.npy"), "not a NumPy .npy file");
  write_npy(temp("short.npy"), Tensor::from(std::vector<float>{1, 2, 3}, {3}));
  const std::string b = read_bytes(temp("short.npy"));
  std::ofstream(temp("short.npy"), std::ios::binary) << b.substr(0, b.size() - 4);
  expect_refused(temp("short.npy"), "needs 12");
  std::string i4 = b;
  i4.replace(i4.find("<f4"), 3, "<i4");
  std::ofstream(temp("int.npy"), std::ios::binary) << i4;
  expect_refused(temp("int.npy"), "dtype '<i4' is not supported");
  std::string fortran = b;
  fortran.replace(fortran.find("False"), 5, "True ");
  std::ofstream(temp("f.npy"), std::ios::binary) << fortran;
  expect_refused(temp("f.npy"), "Fortran order");
  expect_refused(temp("missing.npy"), "cannot be read");
}

}  // namespace
}  // namespace telar
