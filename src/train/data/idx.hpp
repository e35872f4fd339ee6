#pragma once
// Reader for IDX files, the format of MNIST and Fashion-MNIST, gzip-compressed or plain
// (zlib reads both transparently). Only unsigned-byte arrays (type 0x08) are supported,
// which is what every MNIST-format data set uses.
//
// Layout: a big-endian magic number 0x0000TTDD (TT = element type, DD = number of
// dimensions), DD big-endian u32 sizes, then the elements, row-major.
#include <cstdint>
#include <filesystem>
#include <vector>

namespace telar::train {

inline constexpr std::uint32_t kIdxImagesMagic = 0x00000803;  // u8, 3 dimensions: N x rows x cols
inline constexpr std::uint32_t kIdxLabelsMagic = 0x00000801;  // u8, 1 dimension: N

struct IdxArray {
  std::uint32_t magic = 0;
  std::vector<std::int64_t> dims;
  std::vector<std::uint8_t> values;  // product(dims) elements
};

// Reads a whole IDX file and checks that it holds exactly the bytes its header describes.
// `expected_magic` is checked first so that a swapped image/label file gets a clear message.
// Throws telar::Error for a missing, unreadable, truncated, oversized or foreign file.
IdxArray read_idx(const std::filesystem::path& path, std::uint32_t expected_magic);

struct IdxImages {
  std::int64_t count = 0, rows = 0, cols = 0;
  std::vector<std::uint8_t> pixels;  // count * rows * cols
};

IdxImages read_idx_images(const std::filesystem::path& path);
std::vector<std::uint8_t> read_idx_labels(const std::filesystem::path& path);

}  // namespace telar::train
