#pragma once
// Output files are written to a temporary name and renamed into place, so a failed or
// interrupted command never leaves a partial file behind.
#include <filesystem>
#include <string>
#include <string_view>

namespace telar {

// Creates the directory (and parents) and checks that a file can be written in it.
// Throws telar::Error naming the directory and what to do.
void ensure_writable_dir(const std::filesystem::path& dir, std::string_view option_hint = "--out");

// An output directory made up front (when `make`; ensure_writable_dir's checks), so that a bad
// path fails before any work. If the command then fails (leaves the scope by an exception) and
// this made the directory, it is removed again while still empty: bad input leaves nothing.
class OutputDirectory {
 public:
  OutputDirectory(std::filesystem::path dir, bool make, std::string_view option_hint = "--out");
  ~OutputDirectory();
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;
  const std::filesystem::path& path() const { return dir_; }

 private:
  std::filesystem::path dir_;
  bool made_ = false;
  int exceptions_at_start_;
};

// Writes content to path atomically (temporary file in the same directory, then rename).
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

// Removes the temporaries (.NAME.tmp.PID.N) that writers killed mid-way left in `dir`: those
// of processes no longer running. Returns how many it removed.
int remove_stale_temporaries(const std::filesystem::path& dir);

// Reads a whole file; throws telar::Error if it cannot be read.
std::string read_file(const std::filesystem::path& path);

// Whether `path` names a regular file; false, not an exception, for a name the file system
// refuses (e.g. longer than it allows).
bool is_file(const std::filesystem::path& path);
// Whether `path` names a directory; false, not an exception, for a name the file system refuses.
bool is_dir(const std::filesystem::path& path);

// A file written through a temporary name: commit() renames it into place; if the object is
// destroyed without commit() (an exception unwound past it) the temporary file is removed.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  std::FILE* handle() { return file_; }
  void write(const void* data, std::size_t bytes);
  void write(std::string_view text) { write(text.data(), text.size()); }
  void commit();

 private:
  std::filesystem::path path_;
  std::filesystem::path temp_;
  std::FILE* file_ = nullptr;
};

}  // namespace telar
