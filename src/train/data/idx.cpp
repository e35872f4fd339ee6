#include "train/data/idx.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "core/error.hpp"

namespace telar::train {

namespace fs = std::filesystem;

namespace {

// Where the hint for a missing file points: the data sets come from Debian packages.
constexpr const char* kInstallHint =
    "scripts/setup.sh installs Fashion-MNIST (Debian package dataset-fashion-mnist) under "
    "/usr/share/datasets/fashion-mnist";

// No single IDX array we read is near this size; a header claiming more is corrupt, and
// refusing it keeps a damaged header from asking for an absurd allocation.
constexpr std::uint64_t kMaxIdxBytes = std::uint64_t{1} << 36;

class GzReader {
 public:
  explicit GzReader(const fs::path& path) : path_(path) {
    std::error_code ec;
    if (!fs::exists(path, ec))
      fail("data file '{}' does not exist; check the path ({})", path.string(), kInstallHint);
    if (fs::is_directory(path, ec))
      fail("data file '{}' is a directory; give the path of an IDX file", path.string());
    file_ = gzopen(path.c_str(), "rb");
    if (!file_)
      fail("cannot open data file '{}': {}; check its permissions", path.string(),
           std::strerror(errno));
    gzbuffer(file_, 1 << 17);
  }
  ~GzReader() {
    if (file_) gzclose(file_);
  }
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  // Reads up to `bytes` bytes; returns how many were read (fewer only at the end of the data).
  std::size_t read(void* out, std::size_t bytes) {
    std::size_t done = 0;
    while (done < bytes && !ended_) {
      const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(bytes - done, 1u << 24));
      const int got = gzread(file_, static_cast<char*>(out) + done, chunk);
      if (got < 0) {
        int code = Z_OK;
        const char* message = gzerror(file_, &code);
        // zlib reports a gzip stream cut short as Z_BUF_ERROR; the caller's size check then
        // says how much is missing, which is the useful part of the message.
        if (code == Z_BUF_ERROR) {
          ended_ = true;
          cut_short_ = true;
          break;
        }
        fail(
            "cannot read data file '{}': {} (zlib error {}); the file is damaged, reinstall or "
            "re-download it",
            path_.string(), message ? message : "unknown error", code);
      }
      if (got == 0) ended_ = true;
      done += static_cast<std::size_t>(got);
    }
    return done;
  }
  bool cut_short() const { return cut_short_; }

 private:
  fs::path path_;
  gzFile file_ = nullptr;
  bool ended_ = false;
  bool cut_short_ = false;
};

std::uint32_t big_endian_u32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

std::string describe_magic(std::uint32_t magic) {
  switch (magic) {
    case kIdxImagesMagic:
      return "an IDX image file";
    case kIdxLabelsMagic:
      return "an IDX label file";
    default:
      return "not an MNIST-format IDX file";
  }
}

[[noreturn]] void fail_truncated(const fs::path& path, std::uint64_t expected, std::uint64_t actual,
                                 bool gzip_cut_short) {
  fail(
      "data file '{}' is truncated: expected {} bytes, found {}{}; the file is incomplete, "
      "reinstall or re-download it",
      path.string(), expected, actual, gzip_cut_short ? " (the gzip stream ends early)" : "");
}

}  // namespace

IdxArray read_idx(const fs::path& path, std::uint32_t expected_magic) {
  GzReader reader(path);
  IdxArray out;

  std::uint8_t magic_bytes[4];
  const std::size_t magic_read = reader.read(magic_bytes, 4);
  if (magic_read < 4) fail_truncated(path, 4, magic_read, reader.cut_short());
  out.magic = big_endian_u32(magic_bytes);
  if (out.magic != expected_magic)
    fail(
        "data file '{}' has magic number 0x{:08X} ({}), expected 0x{:08X} ({}); check that the "
        "image and label files are given in the right places",
        path.string(), out.magic, describe_magic(out.magic), expected_magic,
        describe_magic(expected_magic));

  const std::size_t rank = magic_bytes[3];
  std::vector<std::uint8_t> dim_bytes(4 * rank);
  const std::size_t header_bytes = 4 + dim_bytes.size();
  const std::size_t dims_read = reader.read(dim_bytes.data(), dim_bytes.size());
  if (dims_read < dim_bytes.size())
    fail_truncated(path, header_bytes, 4 + dims_read, reader.cut_short());

  std::uint64_t element_count = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    const std::uint32_t size = big_endian_u32(&dim_bytes[4 * d]);
    out.dims.push_back(size);
    element_count *= size;  // each factor < 2^32 and the running product is capped below
    if (element_count > kMaxIdxBytes)
      fail(
          "data file '{}' declares dimensions too large for an IDX data set; the header is "
          "damaged, reinstall or re-download it",
          path.string());
  }

  const std::uint64_t expected_total = header_bytes + element_count;
  // Grown chunk by chunk so that a damaged header on a short file costs only what the file
  // holds, not what the header claims.
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 24;
  out.values.reserve(static_cast<std::size_t>(std::min(element_count, kChunk)));
  std::uint64_t values_read = 0;
  while (values_read < element_count) {
    const std::uint64_t want = std::min(kChunk, element_count - values_read);
    out.values.resize(static_cast<std::size_t>(values_read + want));
    const std::size_t got =
        reader.read(out.values.data() + values_read, static_cast<std::size_t>(want));
    values_read += got;
    if (got < want) break;
  }
  if (values_read < element_count)
    fail_truncated(path, expected_total, header_bytes + values_read, reader.cut_short());

  std::uint8_t extra[1];
  if (reader.read(extra, 1) != 0)
    fail(
        "data file '{}' is longer than its header says ({} bytes expected); it is not a single "
        "IDX array, check the file",
        path.string(), expected_total);
  return out;
}

IdxImages read_idx_images(const fs::path& path) {
  IdxArray array = read_idx(path, kIdxImagesMagic);
  return {array.dims[0], array.dims[1], array.dims[2], std::move(array.values)};
}

std::vector<std::uint8_t> read_idx_labels(const fs::path& path) {
  return std::move(read_idx(path, kIdxLabelsMagic).values);
}

}  // namespace telar::train
