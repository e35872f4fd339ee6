// telar compare's arithmetic against the seed-002 thesis' own figures (Table 4.2 and the
// speed-ups of §5.1): the per-device energies of its sauna runs must give back its EDPs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "report/run_comparison.hpp"

using namespace telar::report;

namespace {

RunFigures run(const std::string& name, int devices, double seconds, double energy_seconds,
               double used, double all) {
  RunFigures f;
  f.name = name;
  f.devices = devices;
  f.seconds = seconds;
  f.energy_seconds = energy_seconds;
  f.energy_used_joules = used;
  f.energy_all_joules = all;
  return f;
}

}  // namespace

TEST(RunComparison, ReproducesTheThesisTable42) {
  // Used energy = CPU packages + the GPUs in use; "with idle" adds the idle GPUs (DRAM
  // excluded), from the thesis' per-device means; times: total times (10-run means) and the
  // profiled runs' lengths.
  const std::vector<RunFigures> runs = {
      run("1 GPU", 1, 6607.74, 6599, 289277 + 879244, 289277 + 879244 + 108709),
      run("2 GPUs", 2, 3687.43, 3730.5, 194681 + 473630 + 482048, 194681 + 473630 + 482048),
      run("CPU", 1, 78522.95, 78773.5, 8481907, 8481907 + 1321945 + 1301045),
  };
  const auto rows = compare_runs(runs, 0);
  EXPECT_NEAR(*rows[1].edp, 0.5565, 5e-5);
  EXPECT_NEAR(*rows[1].edp_all, 0.5092, 5e-5);
  EXPECT_NEAR(*rows[2].edp, 86.648, 5e-3);
  EXPECT_NEAR(*rows[2].edp_all, 103.788, 5e-3);
  EXPECT_NEAR(rows[1].speedup, 1.792, 5e-4);     // 2 GPUs vs 1 GPU, end to end
  EXPECT_NEAR(rows[1].efficiency, 0.896, 5e-4);  // 89.5% in the thesis (rounded down)
  EXPECT_NEAR(rows[2].speedup, 1 / 11.883, 1e-4);
  EXPECT_DOUBLE_EQ(*rows[0].edp, 1.0);
  EXPECT_NEAR(*rows[1].energy_ratio, 0.984, 5e-4);
  const std::string table = format_comparison(rows, 0);
  EXPECT_NE(table.find("1 GPU *"), std::string::npos) << table;
  EXPECT_NE(table.find("0.5565"), std::string::npos) << table;
}

TEST(RunComparison, RunsWithoutEnergyStillCompareTime) {
  RunFigures a;
  a.name = "a";
  a.seconds = 10;
  RunFigures b;
  b.name = "b";
  b.seconds = 4;
  b.devices = 2;
  const auto rows = compare_runs({a, b}, 0);
  EXPECT_DOUBLE_EQ(rows[1].speedup, 2.5);
  EXPECT_DOUBLE_EQ(rows[1].efficiency, 1.25);
  EXPECT_FALSE(rows[1].edp.has_value());
  EXPECT_NE(format_comparison(rows, 0).find(" - "), std::string::npos);
}

TEST(RunComparison, ReadsTrainingRunsAndRefusesOthers) {
  const auto dir = std::filesystem::temp_directory_path() / ("telar_cmp_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "r");
  std::ofstream(dir / "r" / "run.json") << R"({"command":"train","config":{"backend":"cpu,cpu"},
    "status":"finished","result":{"loop_seconds":12.5,"train_seconds":10,"total_seconds":14,
    "test":{"accuracy":0.9},"data_parallel":{"workers":2},
    "energy":{"measured":true,"used_joules":100,"all_joules":120,"seconds":14}}})";
  const RunFigures f = read_run_figures(dir / "r", TimeBasis::Loop);
  EXPECT_EQ(f.devices, 2);
  EXPECT_DOUBLE_EQ(f.seconds, 12.5);
  EXPECT_DOUBLE_EQ(read_run_figures(dir / "r", TimeBasis::Train).seconds, 10);
  EXPECT_DOUBLE_EQ(*f.energy_used_joules, 100);
  EXPECT_DOUBLE_EQ(*f.accuracy, 0.9);
  std::filesystem::create_directories(dir / "running");
  std::ofstream(dir / "running" / "run.json") << R"({"command":"train","status":"running"})";
  EXPECT_THROW(read_run_figures(dir / "running", TimeBasis::Loop), telar::Error);
  EXPECT_THROW(read_run_figures(dir / "none", TimeBasis::Loop), telar::Error);
  std::filesystem::remove_all(dir);
}
