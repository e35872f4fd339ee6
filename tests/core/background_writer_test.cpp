#include "core/background_writer.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "core/error.hpp"
#include "core/files.hpp"

namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const char* name) {
  fs::path p = fs::temp_directory_path() /
               (std::string("telar_writer_") + name + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

}  // namespace

TEST(BackgroundWriter, WritesEveryFileByFinish) {
  const fs::path dir = fresh_dir("all");
  // A queue of 1 KB: the caller has to wait for the writer again and again.
  telar::BackgroundWriter writer(1024);
  for (int i = 0; i < 200; ++i)
    writer.write(dir / ("f" + std::to_string(i)),
                 std::string(100 + i, static_cast<char>('a' + i % 26)));
  writer.finish();
  for (int i = 0; i < 200; ++i)
    EXPECT_EQ(telar::read_file(dir / ("f" + std::to_string(i))),
              std::string(100 + i, static_cast<char>('a' + i % 26)))
        << i;
  fs::remove_all(dir);
}

TEST(BackgroundWriter, AFailedWriteIsReportedAndStopsTheRest) {
  const fs::path dir = fresh_dir("fail");
  telar::BackgroundWriter writer;
  writer.write(dir / "first", "1");
  writer.write(dir / "missing" / "second", "2");  // its directory does not exist
  // The writer thread may have failed already (it is quick): then this call reports it.
  try {
    writer.write(dir / "third", "3");
  } catch (const telar::Error&) {
  }
  EXPECT_THROW(writer.finish(), telar::Error);
  EXPECT_THROW(writer.write(dir / "fourth", "4"), telar::Error);  // the failure stays
  EXPECT_TRUE(fs::exists(dir / "first"));
  EXPECT_FALSE(fs::exists(dir / "fourth"));
  fs::remove_all(dir);
}

TEST(BackgroundWriter, DestroyedWithoutFinishLeavesNoPartialFile) {
  const fs::path dir = fresh_dir("drop");
  {
    telar::BackgroundWriter writer;
    for (int i = 0; i < 50; ++i)
      writer.write(dir / ("f" + std::to_string(i)), std::string(4096, 'x'));
  }
  // Whatever was written is whole; nothing temporary is left.
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(fs::file_size(e.path()), 4096u) << e.path();
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  }
  fs::remove_all(dir);
}
