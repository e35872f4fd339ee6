// `telar demo` end to end: every stage runs on this machine and leaves its run where the final
// lines say, with results that make sense on their own terms (a trained CNN well above chance,
// a profile whose batches add up, an adapted CNN smaller and faster, two data-parallel workers whose shares sum to one, DLRM's
// components whose cycle shares sum to one).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run_command.hpp"

namespace fs = std::filesystem;
using telar::testing::fresh_temp_dir;
using telar::testing::run_telar;

namespace {

nlohmann::json result_of(const fs::path& run) {
  std::ifstream in(run / "run.json");
  return nlohmann::json::parse(in).at("result");
}

// Rows of a CSV file as column -> text maps.
std::vector<std::map<std::string, std::string>> read_csv(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  for (std::stringstream h(line); std::getline(h, line, ',');) header.push_back(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::map<std::string, std::string> row;
    std::stringstream cells(line);
    std::string cell;
    for (const auto& name : header) {
      std::getline(cells, cell, ',');
      row[name] = cell;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

TEST(Demo, EveryStageRunsAndLeavesItsRun) {
  const fs::path out = fresh_temp_dir("demo");
  const auto r = run_telar({"demo", "--out", out.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("telar demo finished"), std::string::npos) << r.out;

  // 1. One epoch of the seed-001 CNN: well above the 10 % of guessing.
  EXPECT_GT(result_of(out / "train")["test"]["accuracy"].get<double>(), 0.7);
  // Its profile: the run's task-clock is its epochs' plus the run's gap, to the nanosecond.
  std::map<std::string, double> task_clock;
  for (const auto& row : read_csv(out / "train" / "profile" / "counters.csv"))
    if (row.at("event") == "task-clock") task_clock[row.at("scope")] = std::stod(row.at("value"));
  ASSERT_TRUE(task_clock.count("run") && task_clock.count("run/epoch[0]") && task_clock.count("run/gap"));
  EXPECT_EQ(task_clock["run/epoch[0]"] + task_clock["run/gap"], task_clock["run"]);
  EXPECT_TRUE(task_clock.count("run/epoch[0]/batch[0]"));

  // The trained CNN as ONNX, benched from that file at batch 1 and 64.
  EXPECT_TRUE(fs::exists(out / "mnist_cnn.onnx"));
  const nlohmann::json bench = result_of(out / "bench");
  ASSERT_EQ(bench["points"].size(), 2u);
  EXPECT_EQ(bench["points"][1]["batch"], 64);
  for (const auto& point : bench["points"])  // --layers: each node timed
    EXPECT_TRUE(point.contains("layers") && !point["layers"].empty()) << point.dump();
  EXPECT_TRUE(fs::exists(out / "bench" / "report.html"));
  // The CNN quantized to int8 and benched beside fp32 (where the CPU has VNNI).
  if (fs::exists(out / "int8")) {
    EXPECT_TRUE(fs::exists(out / "int8" / "quantization.json"));
    const nlohmann::json int8 = result_of(out / "bench-int8");
    ASSERT_EQ(int8["points"].size(), 4u);
    EXPECT_EQ(int8["points"][2]["precision"], "int8");
  }

  // The layer's GEMM swept over nine tiles on MAERI: every case simulated with a correct output,
  // and the largest tile (8 x 32 of the 256 multipliers) takes fewer cycles than the smallest.
  const auto sweep = read_csv(out / "sim" / "sweep" / "summary.csv");
  ASSERT_EQ(sweep.size(), 9u);
  std::map<std::string, double> sweep_cycles;
  for (const auto& row : sweep) {
    EXPECT_EQ(row.at("output"), "correct") << row.at("source");
    sweep_cycles[row.at("source")] = std::stod(row.at("cycles"));
  }
  EXPECT_LT(sweep_cycles.at("T_N=8 T_K=32"), sweep_cycles.at("T_N=2 T_K=8"));
  EXPECT_NE(r.out.find(std::to_string(static_cast<long long>(sweep_cycles.at("T_N=4 T_K=16")))),
            std::string::npos)
      << "the printed table shows the sweep's cycles";

  // The CNN adapted to this CPU's latency: fewer parameters, a lower latency, still a classifier
  // (well above the 0.1 of chance). Not a fixed accuracy: the latencies are measured, and
  // NetAdapt's ratio rule keeps whichever candidate met the iteration's constraint at the least
  // accuracy per millisecond; fc1 (37 % of the batch-1 latency) can be cut to 8-16 units
  // (0.28-0.42 held-out accuracy) to meet it, and where the other groups' measurements miss the
  // constraint that candidate is kept (seen once in CI: 0.32; once in 12 runs by hand: 0.27).
  const nlohmann::json adapted = result_of(out / "adapt");
  EXPECT_LT(adapted["adapted_parameters"].get<std::int64_t>(),
            adapted["original_parameters"].get<std::int64_t>());
  EXPECT_LT(adapted["adapted_resource"].get<double>(), adapted["original_resource"].get<double>());
  EXPECT_GT(adapted["test_accuracy"].get<double>(), 0.2);
  EXPECT_TRUE(fs::exists(out / "adapt" / "report.html"));

  // 2. The simulated layers.
  EXPECT_TRUE(fs::exists(out / "simulate" / "layers.csv"));
  EXPECT_TRUE(fs::exists(out / "simulate" / "report.html"));

  // 3. Two data-parallel workers, with the energy section (measured or saying why not).
  const nlohmann::json dp = result_of(out / "data-parallel");
  ASSERT_EQ(dp["data_parallel"]["workers"].get<int>(), 2);
  double shares = 0;
  for (const auto& s : dp["data_parallel"]["shares"]) shares += s.get<double>();
  EXPECT_NEAR(shares, 1.0, 1e-9);
  EXPECT_TRUE(dp.contains("energy"));

  // 4. DLRM on the hybrid accelerator: the components' cycle shares sum to one.
  double cycle_share = 0;
  for (const auto& row : read_csv(out / "dlrm" / "components.csv"))
    cycle_share += std::stod(row.at("cycle_share"));
  EXPECT_NEAR(cycle_share, 1.0, 1e-6);
  fs::remove_all(out);
}

}  // namespace
