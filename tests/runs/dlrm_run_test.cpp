// The DLRM runs below the command line: a small training run and the thesis preset's first
// workload to their run directories; bad input refused before anything is written.
#include "runs/dlrm_run.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "../train/test_support.hpp"
#include "core/files.hpp"
#include "core/log.hpp"

using namespace telar;
using train::testing::TempDir;

TEST(DlrmRun, TrainsAndWritesItsRun) {
  log::set_level(log::Level::Quiet);
  TempDir dir("dlrm_run");
  runs::DlrmSetup s;
  s.embedding_size = "100-50-20";
  s.data_size = 256;
  s.mini_batch_size = 32;
  s.quiet = true;
  s.out = (dir / "run").string();
  std::ostringstream out;
  const nlohmann::json result = runs::run_dlrm_model(s, out);
  EXPECT_EQ(result["mode"], "train");
  EXPECT_EQ(result["train"]["samples"], 256);
  EXPECT_EQ(result["train"]["batches"], 8);
  EXPECT_TRUE(std::isfinite(result["train"]["loss"].get<double>()));
  const auto run = nlohmann::json::parse(read_file(dir / "run" / "run.json"));
  EXPECT_EQ(run["status"], "finished");
  EXPECT_NE(out.str().find("run directory"), std::string::npos);
  // The same flags again: the same loss (the run is a function of its flags and seed).
  s.out = (dir / "again").string();
  EXPECT_EQ(runs::run_dlrm_model(s, out)["train"]["loss"], result["train"]["loss"]);
}

TEST(DlrmRun, ThePresetSimulatesTheThesisWorkload) {
  TempDir dir("dlrm_preset");
  runs::DlrmSetup s;
  s.preset = "thesis";
  s.workloads = "DLRM(1)";
  s.out = (dir / "run").string();
  std::ostringstream out;
  const nlohmann::json result = runs::run_dlrm_preset(s, out);
  ASSERT_EQ(result["workloads"].size(), 1u);
  EXPECT_EQ(result["workloads"][0]["name"], "DLRM(1)");
  EXPECT_GT(result["workloads"][0]["total"]["cycles"].get<double>(), 0.0);
}

TEST(DlrmRun, BadInputWritesNothing) {
  TempDir dir("dlrm_bad");
  runs::DlrmSetup s;
  s.out = (dir / "run").string();
  s.nepochs = 0;
  std::ostringstream out;
  train::testing::expect_error([&] { runs::run_dlrm_model(s, out); }, {"--nepochs", "positive"});
  s.nepochs = 1;
  s.data_generation = "tomorrow";
  train::testing::expect_error([&] { runs::run_dlrm_model(s, out); }, {"--data-generation"});
  EXPECT_FALSE(std::filesystem::exists(dir / "run"));
}
