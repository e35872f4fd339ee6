// Tidy CSV, colon format, metrics CSV and table of a hand-made profile.
#include "prof/writers.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.hpp"
#include "core/files.hpp"
#include "prof/table_writer.hpp"

using namespace telar::prof;

namespace {

Profile hand_made(std::vector<int> cpus = {-1}) {
  Profile p;
  p.cpus = cpus;
  p.events = {{"task-clock", "task-clock", "generic", true, ""},
              {"cycles", "cycles", "generic", false, "no PMU"},
              {"page-faults", "page-faults", "generic", true, ""}};
  ScopeRecord run;
  run.path = "run";
  run.kind = ScopeKind::Run;
  run.wall_ns = 600;
  ScopeRecord node;
  node.path = "run/epoch[0]/batch[17]/node[conv2].fwd";
  node.kind = ScopeKind::Node;
  node.epoch = 0;
  node.batch = 17;
  node.node = "conv2.fwd";
  node.name = "conv2";
  node.parent = 0;
  node.wall_ns = 300;
  for (std::size_t c = 0; c < cpus.size(); ++c) {
    const std::int64_t k = static_cast<std::int64_t>(c) + 1;
    run.counts.push_back({1000 * k, 1000 * k, 500, 500});
    run.counts.push_back({});
    run.counts.push_back({7 * k, 7 * k, 500, 500});
    node.counts.push_back({400 * k, 200 * k, 400, 200});  // multiplexed: ran half the time
    node.counts.push_back({});
    node.counts.push_back({2 * k, 2 * k, 400, 400});
  }
  p.records = {run, node};
  return p;
}

}  // namespace

TEST(ProfWriters, TidyCsvHasTheIssueColumnsAndLeavesOutUncountedEvents) {
  EXPECT_EQ(counters_csv(hand_made()),
            "scope,epoch,batch,node,cpu,event,value,time_enabled,time_running,wall_ns\n"
            "run,,,,-1,task-clock,1000,500,500,600\n"
            "run,,,,-1,page-faults,7,500,500,600\n"
            "run/epoch[0]/batch[17]/node[conv2].fwd,0,17,conv2.fwd,-1,task-clock,400,400,200,300\n"
            "run/epoch[0]/batch[17]/node[conv2].fwd,0,17,conv2.fwd,-1,page-faults,2,400,400,300\n");
}

TEST(ProfWriters, CsvQuotesFieldsWithCommas) {
  Profile p = hand_made();
  p.records[1].node = "a,b.fwd";
  p.records[1].path = "run/node[a,b].fwd";
  const std::string csv = counters_csv(p);
  EXPECT_NE(csv.find("\"run/node[a,b].fwd\",0,17,\"a,b.fwd\",-1,task-clock"), std::string::npos)
      << csv;
}

TEST(ProfWriters, ColonFormatIsOneLinePerCpuAndEvent) {
  EXPECT_EQ(colon_lines(hand_made()),
            "-1:1000::task-clock\n-1:7::page-faults\n-1:400::task-clock\n-1:2::page-faults\n");
  EXPECT_EQ(colon_lines(hand_made({2, 3})),
            "2:1000::task-clock\n2:7::page-faults\n3:2000::task-clock\n3:14::page-faults\n"
            "2:400::task-clock\n2:2::page-faults\n3:800::task-clock\n3:4::page-faults\n");
}

TEST(ProfWriters, PerCpuCsvHasARowPerCpu) {
  const std::string csv = counters_csv(hand_made({2, 3}));
  EXPECT_NE(csv.find("run,,,,3,task-clock,2000,500,500,600\n"), std::string::npos) << csv;
}

TEST(ProfWriters, MetricsCsv) {
  const std::string csv = metrics_csv(hand_made());
  EXPECT_EQ(csv.rfind("scope,epoch,batch,node,metric,value\n", 0), 0u);
  // 1000 ns of task-clock in 600 ns of wall time.
  EXPECT_NE(csv.find("run,,,,cpus_utilized,1.6666666666666667\n"), std::string::npos) << csv;
}

TEST(ProfWriters, TableShowsValuesAndWhatWasNotCounted) {
  const std::string t = format_table(hand_made());
  EXPECT_NE(t.find("task-clock"), std::string::npos) << t;
  EXPECT_NE(t.find("1,000"), std::string::npos) << t;
  EXPECT_NE(t.find("not counted"), std::string::npos) << t;
  EXPECT_NE(t.find("400*"), std::string::npos) << "multiplexed values are marked\n" << t;
  EXPECT_EQ(group_digits(1234567), "1,234,567");
  EXPECT_EQ(group_digits(-1000), "-1,000");
  EXPECT_EQ(group_digits(999), "999");
}

TEST(ProfWriters, ColonFileAppendsAcrossRuns) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("telar_colon_" + std::to_string(::getpid()) + ".txt");
  std::filesystem::remove(path);
  append_colon_file(hand_made(), path);
  append_colon_file(hand_made(), path);
  const std::string lines = colon_lines(hand_made());
  EXPECT_EQ(telar::read_file(path), lines + lines);
  std::filesystem::remove(path);
}

TEST(ProfWriters, UnwritableOutputsAreRefusedBeforeAnythingIsWritten) {
  EXPECT_THROW(check_output_dir("/proc/telar-cannot-be-here/out", "--out"), telar::Error);
  EXPECT_THROW(check_output_file("/proc/telar.csv", "--colon"), telar::Error);
  EXPECT_THROW(append_colon_file(hand_made(), "/proc/telar-colon.txt"), telar::Error);
  EXPECT_FALSE(std::filesystem::exists("/proc/telar-colon.txt"));
  // A name of this process's own: a shared /tmp may hold anything under a fixed one.
  const auto fresh = std::filesystem::temp_directory_path() /
                     ("telar-new-" + std::to_string(::getpid()));
  ASSERT_FALSE(std::filesystem::exists(fresh));
  EXPECT_NO_THROW(check_output_dir(fresh / "sub", "--out"));
  EXPECT_FALSE(std::filesystem::exists(fresh)) << "checking creates nothing";
}
