// run_training below the command line: a small run to its run directory, the same result as
// a second identical run, and bad input refused before anything is written.
#include "runs/training_run.hpp"

#include <gtest/gtest.h>

#include "../train/test_support.hpp"
#include "core/files.hpp"
#include "core/log.hpp"
#include "graph/builder.hpp"
#include "graph/zoo/zoo.hpp"
#include "train/checkpoint.hpp"
#include "train/data/synthetic.hpp"

using namespace telar;
using train::testing::TempDir;

namespace {

runs::TrainingSetup small_setup(const std::filesystem::path& out) {
  runs::TrainingSetup s;
  train::SyntheticSpec spec{.samples = 256, .sample_shape = {16}, .num_classes = 4};
  s.train_set = train::make_synthetic_classification(spec, 0);
  spec.samples = 64;
  s.test_set = train::make_synthetic_classification(spec, 1);
  s.data_description = "synthetic";
  s.model_name = "mlp:16-32-4";
  s.net = graph::zoo::build("mlp:16-32-4", {.input = Shape{16}, .classes = std::nullopt});
  s.epochs = 2;
  s.batch_size = 32;
  s.lr = 0.1;
  s.backend = "cpu:threads=1";
  s.measure_energy = false;
  s.quiet = true;
  s.out = out;
  return s;
}

}  // namespace

TEST(TrainingRun, WritesAFinishedRunAndIsReproducible) {
  log::set_level(log::Level::Quiet);
  TempDir dir("training_run");
  const auto first = runs::run_training(small_setup(dir / "a"));
  ASSERT_TRUE(first.has_value());
  const auto run = nlohmann::json::parse(read_file(dir / "a" / "run.json"));
  EXPECT_EQ(run["status"], "finished");
  EXPECT_EQ(run["config"]["epochs"], 2);
  EXPECT_EQ(run["result"]["test"]["samples"], 64);
  EXPECT_TRUE(std::filesystem::exists(dir / "a" / train::kCheckpointFileName));
  // Gaussian clusters of noise 0.5 around unit-variance prototypes: far above chance (0.25).
  EXPECT_GT(first->result["test"]["accuracy"].get<double>(), 0.6);
  const auto second = runs::run_training(small_setup(dir / "b"));
  EXPECT_EQ(first->result["train"]["loss"], second->result["train"]["loss"]);
  EXPECT_EQ(first->result["test"]["accuracy"], second->result["test"]["accuracy"]);
}

TEST(TrainingRun, BadInputIsRefusedBeforeAnythingIsWritten) {
  TempDir dir("training_run_bad");
  auto s = small_setup(dir / "run");
  s.batch_size = 0;
  train::testing::expect_error([&] { runs::run_training(s); }, {"--batch-size", "positive"});
  s = small_setup(dir / "run");
  s.workers = "cpu:threads=1,cpu:threads=1";
  s.bn_buffers = "sometimes";
  train::testing::expect_error([&] { runs::run_training(s); }, {"--bn-buffers", "average"});
  s = small_setup(dir / "run");
  s.train_set = train::subset(s.train_set, {}, "empty");  // an IDX file of 0 images reads so
  train::testing::expect_error([&] { runs::run_training(s); }, {"training data", "no samples"});
  s = small_setup(dir / "run");
  s.model_name = "mlp:16-32-3";
  s.net = graph::zoo::build("mlp:16-32-3", {.input = Shape{16}, .classes = std::nullopt});
  train::testing::expect_error([&] { runs::run_training(s); },
                               {"scores 3 classes but the data has 4", "--classes 4"});
  s = small_setup(dir / "run");
  s.model_name = "scores per position";  // as a segmentation model's [B, classes, H, W]
  {
    graph::GraphBuilder b("per position");
    b.output(b.conv2d(b.input("x", {1, 4, 4}), 4, 1, 1, 0, 1, true, "scores"));
    s.net = b.finish();
  }
  train::testing::expect_error([&] { runs::run_training(s); },
                               {"produces [B, 4, 4, 4], not a score per class"});
  s = small_setup(dir / "run");
  s.resume = dir / "nothing-here";
  s.out = "";
  train::testing::expect_error([&] { runs::run_training(s); }, {"no checkpoint"});
  EXPECT_FALSE(std::filesystem::exists(dir / "run"));
}
