#include "core/files.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
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

TEST(Files, OutputDirectoryMadeByAFailedCommandIsRemovedWhileEmpty) {
  const fs::path root = fresh_dir("outdir");
  fs::create_directories(root);
  const auto fail_inside = [](const fs::path& dir, bool write_a_file) {
    try {
      telar::OutputDirectory out(dir, true);
      if (write_a_file) telar::write_file_atomic(dir / "stats.txt", "x");
      throw telar::Error("bad input");
    } catch (const telar::Error&) {
    }
  };
  fail_inside(root / "empty", false);
  EXPECT_FALSE(fs::exists(root / "empty"));  // made here, left empty: removed
  fail_inside(root / "written", true);
  EXPECT_TRUE(fs::exists(root / "written" / "stats.txt"));  // never removes what was written
  fs::create_directories(root / "existing");
  fail_inside(root / "existing", false);
  EXPECT_TRUE(fs::exists(root / "existing"));  // not made here: kept
  { telar::OutputDirectory kept(root / "ok", true); }
  EXPECT_TRUE(fs::is_directory(root / "ok"));  // success keeps it
  { telar::OutputDirectory not_made(root / "lazy", false); }
  EXPECT_FALSE(fs::exists(root / "lazy"));  // make=false: nothing made
  fs::remove_all(root);
}

// Issue 23, item 3: a write killed mid-way left its temporary for good; the next open of the
// directory removes the temporaries of writers that no longer run (and only those).
TEST(Files, StaleTemporariesOfDeadWritersAreRemoved) {
  fs::path dir = fresh_dir("stale");
  telar::ensure_writable_dir(dir);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);  // a process that no longer runs
  const fs::path stale = dir / (".checkpoint.telar.tmp." + std::to_string(child) + ".0");
  const fs::path live = dir / (".run.json.tmp." + std::to_string(::getpid()) + ".3");
  const fs::path mine = dir / "notes.tmp.1.2";  // not a temporary of ours: no leading dot
  for (const fs::path& p : {stale, live, mine}) telar::write_file_atomic(p, "x");
  EXPECT_EQ(telar::remove_stale_temporaries(dir), 1);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(mine));
  fs::remove_all(dir);
}
