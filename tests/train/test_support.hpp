#pragma once
// Helpers shared by the train tests: fresh temporary directories and checks on error text.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace telar::train::testing {

// A new empty directory under the system temp dir, removed when the object goes away.
class TempDir {
 public:
  explicit TempDir(const std::string& tag)
      : path_(std::filesystem::temp_directory_path() /
              ("telar_train_" + tag + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Runs `action`, expects a telar::Error on one line whose message contains every fragment,
// and returns the message (empty if none was thrown).
inline std::string expect_error(const std::function<void()>& action,
                                std::initializer_list<std::string> fragments) {
  try {
    action();
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "multi-line message: " << message;
    for (const std::string& fragment : fragments)
      EXPECT_NE(message.find(fragment), std::string::npos)
          << "message lacks '" << fragment << "': " << message;
    return message;
  }
  ADD_FAILURE() << "expected a telar::Error";
  return {};
}

// The bytes of an IDX file: big-endian magic and sizes, then the values.
inline std::vector<std::uint8_t> idx_bytes(std::uint32_t magic,
                                           const std::vector<std::uint32_t>& dims,
                                           const std::vector<std::uint8_t>& values) {
  std::vector<std::uint8_t> out;
  auto put_be32 = [&](std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8)
      out.push_back(static_cast<std::uint8_t>(v >> shift));
  };
  put_be32(magic);
  for (std::uint32_t d : dims) put_be32(d);
  out.insert(out.end(), values.begin(), values.end());
  return out;
}

inline void write_plain(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

inline void write_gzip(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  gzclose(f);
}

}  // namespace telar::train::testing
