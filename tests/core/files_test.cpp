#include "core/files.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.hpp"

namespace fs = std::filesystem;

static fs::path fresh_dir(const char* name) {
  fs::path p = fs::temp_directory_path() / (std::string("telar_files_") + name + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

TEST(Files, AtomicWriteCreatesOnlyTheFinalFile) {
  fs::path dir = fresh_dir("atomic");
  telar::ensure_writable_dir(dir);
  telar::write_file_atomic(dir / "a.txt", "hello");
  EXPECT_EQ(telar::read_file(dir / "a.txt"), "hello");
  int count = 0;
  for (auto& e : fs::directory_iterator(dir)) (void)e, ++count;
  EXPECT_EQ(count, 1);
  fs::remove_all(dir);
}

TEST(Files, AbandonedAtomicFileLeavesNothing) {
  fs::path dir = fresh_dir("abandon");
  telar::ensure_writable_dir(dir);
  {
    telar::AtomicFile f(dir / "b.bin");
    f.write("partial");
  }
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST(Files, UnwritableDirectoryIsAnError) {
  if (::geteuid() == 0) {
    // root can write anywhere; a path under a regular file cannot be created by anyone.
    fs::path dir = fresh_dir("file");
    telar::ensure_writable_dir(dir);
    telar::write_file_atomic(dir / "f", "x");
    EXPECT_THROW(telar::ensure_writable_dir(dir / "f" / "sub"), telar::Error);
    fs::remove_all(dir);
  } else {
    EXPECT_THROW(telar::ensure_writable_dir("/proc/telar_cannot_exist"), telar::Error);
  }
}
