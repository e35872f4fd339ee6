// Criteo's text format: parsing by hand-worked lines, the binary cache (built once, reused,
// rebuilt when stale), malformed lines (skipped and counted, or errors with --strict), files
// that end mid-record, and corrupted caches.
#include "dlrm/criteo.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"

using namespace telar;
using namespace telar::dlrm;
namespace fs = std::filesystem;

namespace {

const std::vector<std::int64_t> kRows(26, 1000);

// A line: label, 13 integers, 26 categories; `dense` and `cats` override fields by position.
std::string line(int label, std::vector<std::string> dense = {},
                 std::vector<std::string> cats = {}) {
  std::string s = std::to_string(label);
  for (int j = 0; j < 13; ++j)
    s += "\t" + (j < static_cast<int>(dense.size()) ? dense[j] : std::to_string(j));
  for (int t = 0; t < 26; ++t)
    s += "\t" +
         (t < static_cast<int>(cats.size()) ? cats[t] : fmt::format("{:08x}", 0x1000 * t + 7));
  return s;
}

DlrmConfig criteo_config(const std::string& rows = "1000") {
  std::string sizes = rows;
  for (int t = 1; t < 26; ++t) sizes += "-" + rows;
  return make_config(16, sizes, "13-16", "8-1", "dot", false);
}

fs::path temp_dir(const std::string& name) {
  fs::path p =
      fs::temp_directory_path() / ("telar_criteo_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(Criteo, ParsesALineByHand) {
  CriteoRecord r;
  std::string why;
  // Dense: log(x + 1); empty and negative give 0. Categories: any hex, empty allowed.
  ASSERT_TRUE(parse_criteo_line(line(1, {"0", "", "-3", "1", "1023"}, {"", "ffffffff", "0"}), kRows,
                                r, &why))
      << why;
  EXPECT_EQ(r.label, 1.0f);
  EXPECT_EQ(r.dense[0], 0.0f);
  EXPECT_EQ(r.dense[1], 0.0f);
  EXPECT_EQ(r.dense[2], 0.0f);
  EXPECT_FLOAT_EQ(r.dense[3], std::log(2.0f));
  EXPECT_FLOAT_EQ(r.dense[4], std::log(1024.0f));
  EXPECT_FLOAT_EQ(r.dense[12], std::log(13.0f));
  for (int t = 0; t < 26; ++t) EXPECT_TRUE(r.sparse[t] >= 0 && r.sparse[t] < 1000);
  // Hashing depends on the value and the table: the same value in another table lands
  // elsewhere (almost surely), the same value in the same table in the same row.
  CriteoRecord r2;
  ASSERT_TRUE(parse_criteo_line(line(0, {}, {"", "ffffffff", "0"}), kRows, r2, &why));
  EXPECT_EQ(r2.sparse[1], r.sparse[1]);
  EXPECT_EQ(r2.sparse[0], r.sparse[0]);
  EXPECT_NE(r.sparse[1], r.sparse[2]);
}

TEST(Criteo, MalformedLinesSayWhy) {
  CriteoRecord r;
  std::string why;
  EXPECT_FALSE(parse_criteo_line("1\t2\t3", kRows, r, &why));
  EXPECT_NE(why.find("expected 40 tab-separated fields"), std::string::npos);
  EXPECT_NE(why.find("got 3"), std::string::npos);
  EXPECT_FALSE(parse_criteo_line(line(1) + "\textra", kRows, r, &why));
  EXPECT_NE(why.find("got 41"), std::string::npos);
  EXPECT_FALSE(parse_criteo_line("2" + line(1).substr(1), kRows, r, &why));
  EXPECT_NE(why.find("label is '2'"), std::string::npos);
  EXPECT_FALSE(parse_criteo_line(line(1, {"1.5"}), kRows, r, &why));
  EXPECT_NE(why.find("integer feature 1 is '1.5'"), std::string::npos);
  EXPECT_FALSE(parse_criteo_line(line(1, {}, {"xyz"}), kRows, r, &why));
  EXPECT_NE(why.find("category 1 is 'xyz'"), std::string::npos);
}

TEST(Criteo, CacheIsBuiltOnceAndReadBack) {
  const fs::path dir = temp_dir("cache");
  std::string text;
  for (int i = 0; i < 10; ++i) text += line(i % 2, {std::to_string(i)}) + "\n";
  write(dir / "day_0", text);
  const DlrmConfig c = criteo_config();
  auto cache = CriteoCache::open(c, {dir / "day_0", {}, false});
  EXPECT_TRUE(cache->stats().built);
  EXPECT_EQ(cache->records(), 10);
  EXPECT_EQ(cache->stats().cache, dir / "day_0.telar-cache");
  DlrmBatch b;
  cache->read(3, 4, b);
  ASSERT_EQ(b.size(), 4);
  EXPECT_EQ(b.target.f32()[0], 1.0f);                 // record 3: label 1
  EXPECT_FLOAT_EQ(b.dense.f32()[0], std::log(4.0f));  // record 3: first integer 3
  for (int t = 0; t < 26; ++t) {
    EXPECT_EQ(b.offsets[t].data<std::int64_t>()[2], 2);  // one index per bag
    EXPECT_EQ(b.indices[t].numel(), 4);
  }
  CriteoRecord r;
  std::string why;
  ASSERT_TRUE(parse_criteo_line(line(1, {"3"}), kRows, r, &why));
  EXPECT_EQ(b.indices[5].data<std::int64_t>()[0], r.sparse[5]);
  // A second open reuses it; a processed file alone is enough.
  EXPECT_FALSE(CriteoCache::open(c, {dir / "day_0", {}, false})->stats().built);
  EXPECT_EQ(CriteoCache::open(c, {{}, dir / "day_0.telar-cache", false})->records(), 10);
  // Another table size: rebuilt from the text, or refused without it.
  EXPECT_TRUE(CriteoCache::open(criteo_config("500"), {dir / "day_0", {}, false})->stats().built);
  EXPECT_NE(error_of([&] {
              CriteoCache::open(c, {{}, dir / "day_0.telar-cache", false});
            }).find("was made for other table sizes"),
            std::string::npos);
  // A changed text is noticed.
  write(dir / "day_0", text + line(0) + "\n");
  auto again = CriteoCache::open(c, {dir / "day_0", {}, false});
  EXPECT_TRUE(again->stats().built);
  EXPECT_EQ(again->records(), 11);
  fs::remove_all(dir);
}

TEST(Criteo, MalformedLinesAreSkippedAndCountedOrErrorsWhenStrict) {
  const fs::path dir = temp_dir("bad");
  write(dir / "d",
        line(1) + "\n" + "1\t2\n" + line(0) + "\r\n" + "\n" + line(2) + "\n" + line(0) + "\n");
  const DlrmConfig c = criteo_config();
  auto cache = CriteoCache::open(c, {dir / "d", dir / "p", false});
  EXPECT_EQ(cache->records(), 3);        // lines 1, 3 (CRLF) and 6
  EXPECT_EQ(cache->stats().skipped, 3);  // short line, empty line, label 2
  fs::remove(dir / "p");
  const std::string e = error_of([&] { CriteoCache::open(c, {dir / "d", dir / "p", true}); });
  EXPECT_NE(e.find(":2: expected 40 tab-separated fields"), std::string::npos) << e;
  EXPECT_NE(e.find("--strict"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "p"));  // nothing half-written
  fs::remove_all(dir);
}

TEST(Criteo, AFileEndingMidRecordIsAnError) {
  const fs::path dir = temp_dir("trunc");
  const std::string whole = line(1) + "\n" + line(0) + "\n";
  write(dir / "d", whole + line(1).substr(0, 40));  // cut inside the third record
  const DlrmConfig c = criteo_config();
  const std::string e = error_of([&] { CriteoCache::open(c, {dir / "d", {}, false}); });
  EXPECT_NE(e.find("ends in the middle of a record (line 3"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(dir / "d.telar-cache"));
  // A complete last line without its newline is fine.
  write(dir / "d", whole + line(1));
  EXPECT_EQ(CriteoCache::open(c, {dir / "d", {}, false})->records(), 3);
  // A truncated cache, alone, is refused; with its text it is rebuilt.
  const fs::path cache = dir / "d.telar-cache";
  fs::resize_file(cache, fs::file_size(cache) - 7);
  const std::string e2 = error_of([&] { CriteoCache::open(c, {{}, cache, false}); });
  EXPECT_NE(e2.find("ends in the middle of a record"), std::string::npos) << e2;
  EXPECT_TRUE(CriteoCache::open(c, {dir / "d", {}, false})->stats().built);
  fs::remove_all(dir);
}

TEST(Criteo, ACorruptedCacheIsRefusedWhenOpened) {
  const fs::path dir = temp_dir("corrupt");
  write(dir / "d", line(1) + "\n" + line(0) + "\n");
  const DlrmConfig c = criteo_config();
  CriteoCache::open(c, {dir / "d", {}, false});
  // Record 1, table 4's index: header, then record 0 (160 bytes), then label + 13 floats + 4 ints.
  const fs::path cache = dir / "d.telar-cache";
  const auto header = fs::file_size(cache) - 2 * 160;
  {
    std::fstream f(cache, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(header + 160 + 4 + 13 * 4 + 4 * 4));
    const std::int32_t bad = 5000;
    f.write(reinterpret_cast<const char*>(&bad), 4);
  }
  // Opening a cache this run did not build checks every record.
  const std::string e = error_of([&] { CriteoCache::open(c, {{}, cache, false}); });
  EXPECT_NE(e.find("record 1, table 4: index 5000 is out of range for a table of 1000 rows"),
            std::string::npos)
      << e;
  fs::remove_all(dir);
}

TEST(Criteo, NeedsTwentySixTablesAndThirteenDenseFeatures) {
  const fs::path dir = temp_dir("shape");
  write(dir / "d", line(1) + "\n");
  EXPECT_NE(error_of([&] {
              CriteoCache::open(make_config(16, "10-10", "13-16", "1", "dot", false),
                                {dir / "d", {}, false});
            }).find("needs 26 table sizes"),
            std::string::npos);
  std::string sizes = "10";
  for (int t = 1; t < 26; ++t) sizes += "-10";
  EXPECT_NE(error_of([&] {
              CriteoCache::open(make_config(16, sizes, "12-16", "1", "dot", false),
                                {dir / "d", {}, false});
            }).find("must start with 13"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              CriteoCache::open(criteo_config(), {dir / "missing", {}, false});
            }).find("does not exist"),
            std::string::npos);
  fs::remove_all(dir);
}
