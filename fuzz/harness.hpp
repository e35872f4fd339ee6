#pragma once
// What every libFuzzer harness of telar's parsers shares (issue 23): the input as text or as a
// file, and the rule the harnesses check. A parser may refuse an input only with telar::Error
// (what the CLI prints as one line, exit 2); anything else that escapes it (another exception,
// a crash, a sanitizer's report, a hang past libFuzzer's -timeout, memory past -rss_limit_mb)
// is a finding, and libFuzzer keeps the input that caused it.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace telar::fuzz {

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The input written to this process's own file, named with `extension` (parsers that read a
// path; some tell formats apart by it), rewritten for every input and removed when the process
// exits.
inline std::filesystem::path as_file(const std::uint8_t* data, std::size_t size,
                                     const std::string& extension) {
  struct OwnFiles {
    std::set<std::filesystem::path> paths;
    ~OwnFiles() {
      std::error_code ignored;
      for (const auto& p : paths) std::filesystem::remove(p, ignored);
    }
  };
  static OwnFiles own;
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("telar_fuzz_" + std::to_string(::getpid()) + extension);
  own.paths.insert(file);
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return file;
}

template <class Parse>
int refused_only_by_errors(Parse&& parse) {
  try {
    parse();
  } catch (const telar::Error&) {
  }
  return 0;
}

}  // namespace telar::fuzz
