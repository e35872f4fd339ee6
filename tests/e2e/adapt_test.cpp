// End-to-end tests of telar adapt (docs/adapt.md): a trained run adapted to half its MACs and
// to a measured latency budget writes a run directory whose checkpoint eval, bench and export
// take, with the test accuracy adapt reported; history.csv lists every candidate; bad input is
// refused before anything is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_expect.hpp"
#include "run_command.hpp"

namespace fs = std::filesystem;
using telar::testing::fresh_temp_dir;
using telar::testing::expect_refused;
using telar::testing::last_json;
using telar::testing::run_telar;

namespace {

const std::string kData = "synthetic:1200:1x16x16:10";

// A CNN trained for one epoch on synthetic data: what the tests adapt.
const std::string& trained_run() {
  static const std::string run = [] {
    const std::string dir = fresh_temp_dir("adapt-src") + "/run";
    auto r = run_telar({"train", "--model", "mnist_cnn", "--data", kData, "--epochs", "1",
                        "--batch-size", "32", "--quiet", "--out", dir});
    EXPECT_EQ(r.status, 0) << r.err;
    return dir;
  }();
  return run;
}

TEST(AdaptCli, HalvesTheMacsAndWritesACheckpointEvalBenchAndExportTake) {
  const std::string out = fresh_temp_dir("adapt") + "/run";
  auto r = run_telar({"adapt", "--checkpoint", trained_run(), "--data", kData, "--resource", "macs",
                      "--budget", "0.5", "--delta", "0.1", "--short-term-iterations", "5",
                      "--batch-size", "32", "--out", out, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = last_json(r.out);
  EXPECT_TRUE(j["budget_met"].get<bool>()) << j.dump();
  EXPECT_LE(j["adapted_resource"].get<double>(), 0.5 * j["original_resource"].get<double>());
  EXPECT_LT(j["adapted_parameters"].get<std::int64_t>(),
            j["original_parameters"].get<std::int64_t>());
  for (const char* f : {"run.json", "history.csv", "report.html", "checkpoint.telar"})
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
  // history.csv: a header and one row per candidate, one chosen per iteration.
  std::ifstream csv(fs::path(out) / "history.csv");
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line.rfind("iteration,chosen_by,constraint,group,layers,channels_before", 0), 0u);
  int rows = 0, chosen = 0;
  while (std::getline(csv, line)) {
    ++rows;
    std::vector<std::string> fields;
    std::stringstream row(line);
    for (std::string f; std::getline(row, f, ',');) fields.push_back(f);
    ASSERT_GE(fields.size(), 16u) << line;
    chosen += fields[15] == "1";  // the column "chosen"
  }
  EXPECT_GT(rows, j["iterations"].get<int>());  // several candidates per iteration
  EXPECT_EQ(chosen, j["iterations"].get<int>());
  // The adapted checkpoint: eval gives adapt's test accuracy; bench and export take it.
  auto e = run_telar({"eval", "--checkpoint", out, "--data", kData, "--json"});
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_DOUBLE_EQ(last_json(e.out)["accuracy"].get<double>(), j["test_accuracy"].get<double>());
  auto b = run_telar({"bench", "--checkpoint", out, "--duration", "0.05"});
  EXPECT_EQ(b.status, 0) << b.err;
  const std::string onnx = fresh_temp_dir("adapt-onnx") + "/adapted.onnx";
  auto x = run_telar({"export", "--checkpoint", out, "--out", onnx});
  EXPECT_EQ(x.status, 0) << x.err;
  auto show = run_telar({"models", "show", onnx, "--json"});
  ASSERT_EQ(show.status, 0) << show.err;
  EXPECT_EQ(last_json(show.out)["parameters"], j["adapted_parameters"]);
}

TEST(AdaptCli, AMeasuredLatencyBudgetOnTheCpu) {
  const std::string out = fresh_temp_dir("adapt-latency") + "/run";
  auto r = run_telar({"adapt",       "--checkpoint",
                      trained_run(), "--data",
                      kData,         "--budget",
                      "0.7",         "--delta",
                      "0.2",         "--max-iterations",
                      "3",           "--short-term-iterations",
                      "2",           "--batch-size",
                      "32",          "--measure-seconds",
                      "0.05",        "--threads",
                      "1",           "--out",
                      out,           "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = last_json(r.out);
  EXPECT_EQ(j["resource"], "latency");
  EXPECT_EQ(j["unit"], "ms");
  EXPECT_GT(j["original_resource"].get<double>(), 0.0);
  EXPECT_GE(j["iterations"].get<int>(), 1);
  EXPECT_LT(j["adapted_parameters"].get<std::int64_t>(),
            j["original_parameters"].get<std::int64_t>());
}

TEST(AdaptCli, BadInputIsOneLineAndWritesNothing) {
  const std::string out = fresh_temp_dir("adapt-bad") + "/run";
  const std::vector<std::string> base = {
      "adapt", "--checkpoint", trained_run(), "--data", kData, "--out", out};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_telar(args);
  };
  expect_refused(with({"--budget", "0"}), "--budget");
  expect_refused(with({"--budget", "1"}), "--budget");
  expect_refused(with({"--delta", "0"}), "--delta");
  expect_refused(with({"--resource", "energy"}), "latency, macs or params");
  expect_refused(with({"--search", "binary"}), "linear or bisection");
  expect_refused(with({"--target", "tpu:0"}), "tpu");
  expect_refused(run_telar({"adapt", "--model", "mlp:256-10", "--data", kData, "--resource", "macs",
                            "--out", out}),
                 "no channel group that can be pruned");
  expect_refused(run_telar({"adapt", "--data", kData, "--out", out}), "--checkpoint");
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
