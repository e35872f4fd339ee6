#include "core/files.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace telar {

namespace fs = std::filesystem;

namespace {
fs::path temp_name_for(const fs::path& path) {
  static std::atomic<unsigned> counter{0};
  return path.parent_path() /
         fmt::format(".{}.tmp.{}.{}", path.filename().string(), ::getpid(), counter++);
}
}  // namespace

void ensure_writable_dir(const fs::path& dir, std::string_view option_hint) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    fail("cannot create output directory '{}': {}; choose a writable path with {}", dir.string(),
         ec.message(), option_hint);
  if (!fs::is_directory(dir))
    fail("output path '{}' exists and is not a directory; choose another path with {}",
         dir.string(), option_hint);
  if (::access(dir.c_str(), W_OK) != 0)
    fail("output directory '{}' is not writable ({}); choose a writable path with {}",
         dir.string(), std::strerror(errno), option_hint);
}

OutputDirectory::OutputDirectory(fs::path dir, bool make, std::string_view option_hint)
    : dir_(std::move(dir)), exceptions_at_start_(std::uncaught_exceptions()) {
  if (!make) return;
  made_ = !fs::exists(dir_);
  ensure_writable_dir(dir_, option_hint);
}

OutputDirectory::~OutputDirectory() {
  std::error_code ec;
  if (made_ && std::uncaught_exceptions() > exceptions_at_start_)
    fs::remove(dir_, ec);  // removes a directory only when it is empty
}

AtomicFile::AtomicFile(fs::path path) : path_(std::move(path)), temp_(temp_name_for(path_)) {
  file_ = std::fopen(temp_.c_str(), "wb");
  if (!file_)
    fail("cannot write '{}': {}; check that its directory exists and is writable", path_.string(),
         std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (file_) {
    std::fclose(file_);
    std::error_code ec;
    fs::remove(temp_, ec);
  }
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  if (bytes && std::fwrite(data, 1, bytes, file_) != bytes)
    fail("cannot write '{}': {}; check free disk space", path_.string(), std::strerror(errno));
}

void AtomicFile::commit() {
  if (!file_) return;
  const bool ok = std::fflush(file_) == 0;
  std::fclose(file_);
  file_ = nullptr;
  std::error_code ec;
  if (!ok) {
    fs::remove(temp_, ec);
    fail("cannot write '{}': {}; check free disk space", path_.string(), std::strerror(errno));
  }
  fs::rename(temp_, path_, ec);
  if (ec) {
    fs::remove(temp_, ec);
    fail("cannot move '{}' into place: {}", path_.string(), ec.message());
  }
}

void write_file_atomic(const fs::path& path, std::string_view content) {
  AtomicFile file(path);
  file.write(content);
  file.commit();
}

int remove_stale_temporaries(const fs::path& dir) {
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const auto tmp = name.rfind(".tmp.");
    if (name.empty() || name[0] != '.' || tmp == std::string::npos) continue;
    const std::string rest = name.substr(tmp + 5);  // PID.N
    const auto dot = rest.find('.');
    if (dot == std::string::npos || dot == 0) continue;
    long pid = 0;
    const auto [end, err] = std::from_chars(rest.data(), rest.data() + dot, pid);
    if (err != std::errc() || end != rest.data() + dot || pid <= 0) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // still running
    if (fs::remove(entry.path(), ec)) ++removed;
  }
  return removed;
}

bool is_file(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error);
}

bool is_dir(const fs::path& path) {
  std::error_code error;
  return fs::is_directory(path, error);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read '{}': {}", path.string(), std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace telar
