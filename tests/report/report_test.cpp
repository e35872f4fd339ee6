#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.hpp"
#include "core/files.hpp"
#include "report/html_report.hpp"
#include "report/run_dir.hpp"
#include "report/run_record.hpp"
#include "report/svg_chart.hpp"

using namespace telar::report;

TEST(Svg, LineChartHasOnePolylinePerSeriesAndEscapesText) {
  LineChart c{"loss <train>", "epoch", "loss", {{"train", {0, 1, 2}, {3, 2, 1}}, {"test", {0, 1, 2}, {3.5, 2.5, 2}}}};
  std::string svg = c.render();
  EXPECT_EQ(svg.find("<svg"), 0u);
  size_t count = 0, pos = 0;
  while ((pos = svg.find("<polyline", pos)) != std::string::npos) ++count, ++pos;
  EXPECT_EQ(count, 2u);
  EXPECT_NE(svg.find("loss &lt;train&gt;"), std::string::npos);
}

// A title fits its chart: 14 px while it is short; a long one (here 110 characters on 720 px,
// at about 0.6 of the font size a character) gets 720 - 16 = 704 px / (0.6 * 110) = 10.7 px.
TEST(Svg, ALongTitleGetsASmallerFontInsteadOfRunningOffTheChart) {
  const LineChart short_title{"latency", "batch", "ms", {{"s", {0, 1}, {0, 1}}}};
  EXPECT_NE(short_title.render(720, 320).find("font-size=\"14.0\" font-weight=\"bold\""),
            std::string::npos);
  const LineChart long_title{std::string(110, 'm'), "batch", "ms", {{"s", {0, 1}, {0, 1}}}};
  EXPECT_NE(long_title.render(720, 320).find("font-size=\"10.7\" font-weight=\"bold\""),
            std::string::npos);
}

TEST(Svg, StackedBarsOneRectPerValue) {
  BarChart c{"cycles", "cycles", {"a", "b", "c"}, {"x", "y"}, {{1, 2, 3}, {4, 5, 6}}};
  std::string svg = c.render();
  size_t count = 0, pos = 0;
  while ((pos = svg.find("<rect x=", pos)) != std::string::npos) ++count, ++pos;
  EXPECT_EQ(count, 6u + 2u);  // bars plus two legend swatches
}

TEST(Svg, ShortNumbers) {
  EXPECT_EQ(short_number(1500000), "1.5M");
  EXPECT_EQ(short_number(25000), "25k");
  EXPECT_EQ(short_number(4000), "4000");
  EXPECT_EQ(short_number(1234.4), "1234");
  EXPECT_EQ(short_number(12), "12");
}

TEST(Report, HtmlIsSelfContained) {
  HtmlReport r("run");
  r.table({"a", "b"}, {{"1", "2"}});
  r.svg(LineChart{"t", "x", "y", {{"s", {0, 1}, {0, 1}}}}.render());
  std::string html = r.render();
  EXPECT_NE(html.find("<table>"), std::string::npos);
  EXPECT_EQ(html.find("http://cdn"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(Report, MetricsCsvIsTidy) {
  MetricsTable m;
  m.add(0, -1, "train", "loss", 0.5);
  m.add(0, 3, "train", "loss", 0.25);
  EXPECT_EQ(m.csv(), "epoch,batch,phase,metric,value\n0,-1,train,loss,0.5\n0,3,train,loss,0.25\n");
}

TEST(Report, RunDirectoryWritesRunJson) {
  auto dir = std::filesystem::temp_directory_path() / ("telar_rundir_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  RunDirectory run(dir);
  run.write_run_json("train", {{"epochs", 1}});
  auto j = nlohmann::json::parse(telar::read_file(dir / "run.json"));
  EXPECT_EQ(j["command"], "train");
  EXPECT_EQ(j["config"]["epochs"], 1);
  EXPECT_TRUE(j["machine"].contains("hardware_threads"));
  std::filesystem::remove_all(dir);
}

// A command that fails once its run directory is made leaves no empty directory behind; what
// it wrote, and a directory that was there before, stay.
TEST(Report, AFailedCommandLeavesNoEmptyRunDirectory) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("telar_failed_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const auto fail_in = [&](bool write) {
    try {
      RunDirectory run(dir);
      if (write) telar::write_file_atomic(dir / "checkpoint.telar", "x");
      throw telar::Error("bad input found late");
    } catch (const telar::Error&) {
    }
  };
  fail_in(false);
  EXPECT_FALSE(fs::exists(dir));
  fail_in(true);
  EXPECT_TRUE(fs::exists(dir / "checkpoint.telar"));
  fs::remove_all(dir);
  fs::create_directories(dir);  // the user's own empty directory
  fail_in(false);
  EXPECT_TRUE(fs::exists(dir));
  fs::remove_all(dir);
  {
    RunDirectory run(dir);  // no failure: kept, even empty
  }
  EXPECT_TRUE(fs::exists(dir));
  fs::remove_all(dir);
}

TEST(Report, ARunDirectoryIsRefusedReplacedOrContinued) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("telar_reuse_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  {
    RunDirectory run(dir);  // a new directory: fine
    run.write_run_json("train", {{"epochs", 1}});
    telar::write_file_atomic(dir / "extra.csv", "x");
  }
  EXPECT_THROW(RunDirectory{dir}, telar::Error);
  EXPECT_THROW(check_run_path(dir, RunReuse::Refuse), telar::Error);
  try {
    check_run_path(dir, RunReuse::Refuse);
  } catch (const telar::Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds a run of 'train' already"), std::string::npos)
        << e.what();
  }
  {
    RunDirectory run(dir, RunReuse::Continue);  // the same run goes on: kept as it is
    EXPECT_TRUE(fs::exists(dir / "extra.csv"));
  }
  {
    RunDirectory run(dir, RunReuse::Replace);  // replaced: the old run's files are gone
    EXPECT_FALSE(fs::exists(dir / "extra.csv"));
    EXPECT_FALSE(fs::exists(dir / "run.json"));
  }
  // A directory without run.json is not a run: it is used as it is.
  telar::write_file_atomic(dir / "notes.txt", "mine");
  RunDirectory plain(dir);
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
  fs::remove_all(dir);
}

// --overwrite removes a run's whole directory, so it refuses one that holds what no run writes
// (a user's file or folder: nothing removed) and one that is or holds the working directory.
TEST(Report, ReplacingARunNeverRemovesWhatNoRunWrote) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("telar_replace_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const auto make_run = [&] {
    RunDirectory run(dir, RunReuse::Replace);
    run.write_run_json("train", {});
    telar::write_file_atomic(dir / "metrics.csv", "x");
    telar::write_file_atomic(dir / "checkpoint.telar", "x");
    fs::create_directories(dir / "profile");
  };
  make_run();
  const auto refused = [&](const std::string& needle) {
    try {
      check_run_path(dir, RunReuse::Replace);
      ADD_FAILURE() << "not refused";
    } catch (const telar::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_THROW(RunDirectory(dir, RunReuse::Replace), telar::Error);
    EXPECT_TRUE(fs::exists(dir / "run.json"));
  };
  telar::write_file_atomic(dir / "notes.txt", "mine");
  refused("holds notes.txt, which no telar run writes");
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
  fs::remove(dir / "notes.txt");
  fs::create_directories(dir / "mine");
  refused("holds mine,");
  fs::remove(dir / "mine");
  // A demo's runs (sub-directories holding runs) are a run's own.
  fs::create_directories(dir / "elsewhere");
  telar::write_file_atomic(dir / "elsewhere" / "run.json", "{}");
  telar::write_file_atomic(dir / "old.csv", "x");
  make_run();
  EXPECT_FALSE(fs::exists(dir / "old.csv"));
  EXPECT_FALSE(fs::exists(dir / "elsewhere"));
  // The working directory, or a directory above it.
  make_run();
  fs::create_directories(dir / "train");
  const fs::path before = fs::current_path();
  fs::current_path(dir / "train");
  for (const fs::path& p : {dir, fs::path(".."), fs::path("../")})
    EXPECT_THROW(check_run_path(p, RunReuse::Replace), telar::Error) << p;
  fs::current_path(dir);
  EXPECT_THROW(check_run_path(".", RunReuse::Replace), telar::Error);
  fs::current_path(before);
  EXPECT_NO_THROW(check_run_path(dir, RunReuse::Replace));
  fs::remove_all(dir);
}

TEST(Report, RunRecordTellsTheRunsLife) {
  auto dir =
      std::filesystem::temp_directory_path() / ("telar_runrecord_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  RunDirectory run(dir);
  auto status = [&] {
    return nlohmann::json::parse(telar::read_file(dir / "run.json"))["status"].get<std::string>();
  };
  {
    RunRecord record(run, "train", {{"epochs", 1}});
    EXPECT_EQ(status(), "running");
    EXPECT_EQ(record.guard([] { return 7; }), 7);
    EXPECT_EQ(status(), "running");
    EXPECT_THROW(record.guard([]() -> int { throw std::runtime_error("disk full"); }),
                 std::runtime_error);
    EXPECT_EQ(status(), "failed: disk full");
  }
  {
    RunRecord record(run, "train", {{"epochs", 1}});
    // A run stopped on purpose keeps saying so when the stop is thrown on.
    EXPECT_THROW(record.guard([&] {
      record.stop("non-finite loss");
      throw std::runtime_error("loss is nan");
    }),
                 std::runtime_error);
    EXPECT_EQ(status(), "stopped: non-finite loss");
  }
  // Left by an exception outside guard(): "failed", without the message.
  EXPECT_THROW(
      {
        RunRecord record(run, "train", {{"epochs", 1}});
        throw std::runtime_error("out of memory");
      },
      std::runtime_error);
  EXPECT_EQ(status(), "failed");
  {
    RunRecord record(run, "train", {{"epochs", 1}});
    record.guard([&] { record.finish({{"accuracy", 0.9}}); });
    const auto j = nlohmann::json::parse(telar::read_file(dir / "run.json"));
    EXPECT_EQ(j["status"], "finished");
    EXPECT_EQ(j["result"]["accuracy"], 0.9);
    EXPECT_EQ(j["config"]["epochs"], 1);
  }
  std::filesystem::remove_all(dir);
}
