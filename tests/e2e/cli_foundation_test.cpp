// End-to-end tests of the foundation commands (models, train, eval, infer, demo --help): real
// runs of the built telar binary, bad inputs (one line, exit 2, no partial files), resume.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/files.hpp"
#include "core/npy.hpp"
#include "run_command.hpp"
#include "train/checkpoint.hpp"

using telar::testing::count_files;
using telar::testing::fresh_temp_dir;
using telar::testing::run_telar;
namespace fs = std::filesystem;

namespace {

// Exit status 2, exactly one line on stderr containing `needle`.
void expect_bad_input(const telar::testing::CommandResult& r, const std::string& needle) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr: " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr: " << r.err;
}

void write_bytes(const fs::path& p, const std::vector<unsigned char>& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

std::vector<unsigned char> be32(std::uint32_t v) {
  return {static_cast<unsigned char>(v >> 24), static_cast<unsigned char>(v >> 16),
          static_cast<unsigned char>(v >> 8), static_cast<unsigned char>(v)};
}

// An MNIST-format pair in `dir` named like MNIST's files (train and t10k share the content).
void write_idx_pair(const fs::path& dir, std::uint32_t image_magic, std::uint32_t images,
                    std::uint32_t labels, std::size_t pixel_bytes) {
  for (const char* prefix : {"train", "t10k"}) {
    std::vector<unsigned char> img = be32(image_magic);
    for (auto v : {images, 28u, 28u}) {
      auto b = be32(v);
      img.insert(img.end(), b.begin(), b.end());
    }
    img.resize(img.size() + pixel_bytes, 7);
    write_bytes(dir / (std::string(prefix) + "-images-idx3-ubyte"), img);
    std::vector<unsigned char> lab = be32(0x00000801);
    auto b = be32(labels);
    lab.insert(lab.end(), b.begin(), b.end());
    for (std::uint32_t i = 0; i < labels; ++i) lab.push_back(static_cast<unsigned char>(i % 10));
    write_bytes(dir / (std::string(prefix) + "-labels-idx1-ubyte"), lab);
  }
}

std::vector<std::string> quick_train(const std::string& out) {
  return {"train",    "--model", "mlp:784-32-10", "--data", "synthetic:256:1x28x28:10",
          "--epochs", "1",       "--batch-size",  "32",     "--threads",
          "1",        "--quiet", "--out",         out};
}

nlohmann::json last_json_line(const std::string& out) {
  return nlohmann::json::parse(telar::testing::last_line(out));
}

}  // namespace

TEST(CliFoundation, VersionAndHelpOfEveryCommand) {
  auto v = run_telar({"--version"});
  EXPECT_EQ(v.status, 0);
  EXPECT_NE(v.out.find("telar 0."), std::string::npos);
  auto h = run_telar({"--help"});
  EXPECT_EQ(h.status, 0);
  // Every command the top-level help lists (the lines after "commands:" up to the blank line),
  // so a new command is covered without editing this test.
  std::vector<std::string> listed;
  const auto start = h.out.find("commands:\n");
  ASSERT_NE(start, std::string::npos) << h.out;
  std::istringstream lines(h.out.substr(start + 10));
  for (std::string line; std::getline(lines, line) && !line.empty();)
    listed.push_back(line.substr(2, line.find(' ', 2) - 2));
  for (const char* cmd : {"models", "train", "eval", "infer", "bench", "demo", "prof"})
    EXPECT_NE(std::find(listed.begin(), listed.end(), cmd), listed.end()) << cmd;
  for (const std::string& cmd : listed) {
    auto r = run_telar({cmd, "--help"});
    EXPECT_EQ(r.status, 0) << cmd;
    EXPECT_NE(r.out.find("--"), std::string::npos) << cmd << ": " << r.out;
  }
}

TEST(CliFoundation, ModelsListsPublishedParameterCounts) {
  auto r = run_telar({"models"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("57044810"), std::string::npos);  // AlexNet, 10 classes
  auto show =
      run_telar({"models", "show", "resnet34", "--input", "1x148x197", "--classes", "9", "--json"});
  EXPECT_EQ(show.status, 0);
  EXPECT_EQ(last_json_line(show.out)["parameters"], 21283017);
}

TEST(CliFoundation, TrainWritesRunDirectoryAndJson) {
  const std::string out = fresh_temp_dir("train") + "/run";
  auto args = quick_train(out);
  args.push_back("--json");
  auto r = run_telar(args);
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = last_json_line(r.out);
  for (const char* key : {"train", "test", "samples_per_s", "epoch_seconds", "run_dir"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_GE(j["test"]["accuracy"].get<double>(), 0.0);
  EXPECT_LE(j["test"]["accuracy"].get<double>(), 1.0);
  // One epoch of 256 samples: its own throughput is 256 samples over its time, and the run's.
  ASSERT_EQ(j["epoch_samples_per_s"].size(), 1u);
  const double epoch_seconds = j["epoch_seconds"][0].get<double>();
  EXPECT_NEAR(j["epoch_samples_per_s"][0].get<double>() * epoch_seconds, 256.0, 1e-6);
  EXPECT_NEAR(j["samples_per_s"].get<double>() * epoch_seconds, 256.0, 1e-6);
  for (const char* f : {"run.json", "metrics.csv", "report.html", "checkpoint.telar"})
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
  // The checkpoint evaluates to the same test accuracy the run reported.
  auto e = run_telar({"eval", "--checkpoint", out, "--data", "synthetic:256:1x28x28:10", "--json"});
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_DOUBLE_EQ(last_json_line(e.out)["accuracy"].get<double>(),
                   j["test"]["accuracy"].get<double>());
}

// A model built for another --input than the data's samples trains on them fitted to it
// (docs/train.md): the run records how, and eval and bench --accuracy fit the test set the same
// way, giving the run's accuracy; --fit pad cannot shrink, and a bad --fit is refused.
TEST(CliFoundation, SamplesAreFittedToTheModelsInput) {
  const std::string out = fresh_temp_dir("fit") + "/run";
  const std::string data = "synthetic:256:1x20x20:10";
  auto r = run_telar({"train", "--model", "mnist_cnn", "--input", "3x28x28", "--data", data,
                      "--epochs", "1", "--batch-size", "32", "--threads", "1", "--quiet", "--fit",
                      "pad", "--json", "--out", out});
  ASSERT_EQ(r.status, 0) << r.err;
  const double accuracy = last_json_line(r.out)["test"]["accuracy"].get<double>();
  std::ifstream in(fs::path(out) / "run.json");
  const auto run = nlohmann::json::parse(in);
  EXPECT_EQ(run["config"]["fit"], "pad");
  EXPECT_EQ(run["config"]["data_input"], "1x20x20");
  auto e = run_telar({"eval", "--checkpoint", out, "--data", data, "--json"});
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_DOUBLE_EQ(last_json_line(e.out)["accuracy"].get<double>(), accuracy);
  auto b = run_telar({"bench", "--checkpoint", out, "--data", data, "--accuracy", "--batch", "1",
                      "--duration", "0.05", "--json"});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_NE(b.out.find(fmt::format("{:.4f}", accuracy)), std::string::npos) << b.out;
  // Resized instead, the same weights see other inputs.
  auto resized = run_telar({"eval", "--checkpoint", out, "--data", data, "--fit", "resize"});
  EXPECT_EQ(resized.status, 0) << resized.err;
  expect_bad_input(run_telar({"eval", "--checkpoint", out, "--data", data, "--fit", "crop"}),
                   "resize or pad");
  expect_bad_input(run_telar({"train", "--model", "mnist_cnn", "--input", "1x16x16", "--data", data,
                              "--fit", "pad", "--out", out + "2"}),
                   "--fit pad cannot shrink");
  // A bad --fit is refused even where the data's samples are the model's input already.
  expect_bad_input(run_telar({"train", "--model", "mnist_cnn", "--input", "1x20x20", "--data", data,
                              "--fit", "crop", "--out", out + "2"}),
                   "resize or pad");
  // Evaluated without --data: the run's own data, fitted as it was trained.
  auto own = run_telar({"eval", "--checkpoint", out, "--json"});
  ASSERT_EQ(own.status, 0) << own.err;
  EXPECT_DOUBLE_EQ(last_json_line(own.out)["accuracy"].get<double>(), accuracy);
  EXPECT_FALSE(fs::exists(out + "2"));
}

TEST(CliFoundation, InferReportsLatency) {
  auto r = run_telar({"infer", "--model", "mnist_cnn", "--batch", "2", "--repeats", "3", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = last_json_line(r.out);
  EXPECT_GT(j["latency_ms_median"].get<double>(), 0.0);
  EXPECT_EQ(j["batch"], 2);
  // On two threads the fifth forward tries one thread (cpu/thread_choice.hpp): latency.csv keeps
  // that probe, marked; --repeats and the median count the runs on the chosen threads.
  const std::string out = fresh_temp_dir("infer_probes") + "/run";
  r = run_telar({"infer", "--model", "mnist_cnn", "--batch", "2", "--threads", "2", "--warmup", "0",
                 "--repeats", "12", "--out", out, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  j = last_json_line(r.out);
  std::istringstream csv(telar::read_file(fs::path(out) / "latency.csv"));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "repeat,latency_ms,probe");
  std::vector<double> chosen;
  int probes = 0;
  while (std::getline(csv, line)) {
    const auto first = line.find(','), second = line.rfind(',');
    const double ms = std::stod(line.substr(first + 1, second - first - 1));
    if (line.substr(second + 1) == "1")
      ++probes;
    else
      chosen.push_back(ms);
  }
  EXPECT_GE(probes, 1);
  ASSERT_EQ(chosen.size(), 12u);
  std::sort(chosen.begin(), chosen.end());
  // percentile(): linear between the sorted runs at q * (n - 1).
  EXPECT_NEAR(j["latency_ms_median"].get<double>(), 0.5 * (chosen[5] + chosen[6]), 2e-6);
  EXPECT_NEAR(j["latency_ms_p10"].get<double>(), chosen[1] + 0.1 * (chosen[2] - chosen[1]), 2e-6);
  EXPECT_NEAR(j["latency_ms_p90"].get<double>(), chosen[9] + 0.9 * (chosen[10] - chosen[9]), 2e-6);
}

// Inference compilation (docs/inference.md): infer runs the optimized graph unless told
// --no-optimize, and both give the same outputs; models show --optimized prints the fused graph.
TEST(CliFoundation, InferOptimizesUnlessToldNot) {
  const std::string dir = fresh_temp_dir("optimize");
  std::vector<telar::Tensor> outputs;
  for (const bool optimize : {true, false}) {
    const std::string y = dir + (optimize ? "/opt.npy" : "/plain.npy");
    std::vector<std::string> args = {"infer",   "--model",   "resnet18",  "--input", "3x32x32",
                                     "--batch", "2",         "--repeats", "1",       "--warmup",
                                     "0",       "--outputs", y,           "--json"};
    if (!optimize) args.push_back("--no-optimize");
    auto r = run_telar(args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(last_json_line(r.out)["optimized"], optimize);
    outputs.push_back(telar::read_npy(y));
  }
  ASSERT_EQ(outputs[0].shape(), outputs[1].shape());
  float diff = 0.0f, scale = 0.0f;
  for (std::int64_t i = 0; i < outputs[0].numel(); ++i) {
    diff = std::max(diff, std::fabs(outputs[0].f32()[i] - outputs[1].f32()[i]));
    scale = std::max(scale, std::fabs(outputs[1].f32()[i]));
  }
  EXPECT_LE(diff, 1e-5f * scale);
  auto show = run_telar({"models", "show", "resnet18", "--optimized"});
  ASSERT_EQ(show.status, 0) << show.err;
  EXPECT_NE(show.out.find("+sum +ReLU"), std::string::npos) << show.out;
  EXPECT_EQ(show.out.find("BatchNorm2d"), std::string::npos) << show.out;
  EXPECT_NE(
      show.out.find("fold_batchnorm 20 fold_bias_add 0 fold_scale_into_linear 0 "
                    "schedule_shortcuts_first 3 fuse_residual_add 8 "
                    "fuse_gated_activation 0 fuse_gelu 0 fuse_layer_norm 0 fold_pad_into_pool 0 "
                    "fuse_activation 17"),
      std::string::npos)
      << show.out;
}

// models show --prunable lists the channel groups (docs/adapt.md): ResNet-18's stem and the
// last convolution of each block of a stage are one group (the residual Adds join them); the
// classifier's channels are the output and stay.
TEST(CliFoundation, ModelsShowListsChannelGroups) {
  auto r = run_telar({"models", "show", "resnet18", "--prunable", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("channel groups: 12 of 13 prunable"), std::string::npos) << r.out;
  const auto groups = last_json_line(r.out)["channel_groups"];
  ASSERT_EQ(groups.size(), 13u);
  EXPECT_EQ(groups[0]["layers"],
            nlohmann::json::array({"conv1", "layer1.0.conv2", "layer1.1.conv2"}));
  EXPECT_EQ(groups[0]["channels"], 64);
  EXPECT_EQ(groups[12]["layers"], nlohmann::json::array({"fc"}));
  EXPECT_EQ(groups[12]["prunable"], false);
  EXPECT_NE(groups[12]["blocked"].get<std::string>().find("output"), std::string::npos);
}

TEST(CliFoundation, BadIdxFilesAreOneLineErrors) {
  const std::string root = fresh_temp_dir("idx");
  const std::string out = root + "/run";
  // Missing files.
  expect_bad_input(run_telar({"train", "--model", "mnist_cnn", "--data", "mnist:" + root + "/none",
                              "--out", out}),
                   "none");
  // Truncated pixels: 10 images announced, 100 bytes present.
  fs::create_directories(root + "/trunc");
  write_idx_pair(root + "/trunc", 0x00000803, 10, 10, 100);
  expect_bad_input(run_telar({"train", "--model", "mnist_cnn", "--data", "mnist:" + root + "/trunc",
                              "--out", out}),
                   "truncated");
  // Wrong magic number.
  fs::create_directories(root + "/magic");
  write_idx_pair(root + "/magic", 0x00000804, 10, 10, 10 * 784);
  expect_bad_input(run_telar({"train", "--model", "mnist_cnn", "--data", "mnist:" + root + "/magic",
                              "--out", out}),
                   "magic");
  // Label and image counts differ.
  fs::create_directories(root + "/count");
  write_idx_pair(root + "/count", 0x00000803, 10, 9, 10 * 784);
  expect_bad_input(run_telar({"train", "--model", "mnist_cnn", "--data", "mnist:" + root + "/count",
                              "--out", out}),
                   "10");
  EXPECT_FALSE(fs::exists(out)) << "no run directory after bad input";
}

// Issue 23, item 5: a test set of another image size than the training set is refused before
// anything is written (it used to fail after training, leaving a run directory).
TEST(CliFoundation, ATestSetOfAnotherImageSizeIsRefusedBeforeTraining) {
  const std::string root = fresh_temp_dir("idx_sizes");
  const std::string out = root + "/run";
  fs::create_directories(root + "/sizes");
  write_idx_pair(root + "/sizes", 0x00000803, 10, 10, 10 * 784);
  std::vector<unsigned char> img = be32(0x00000803);  // the test images: 10 of 32x32
  for (auto v : {10u, 32u, 32u}) {
    auto b = be32(v);
    img.insert(img.end(), b.begin(), b.end());
  }
  img.resize(img.size() + 10 * 32 * 32, 7);
  write_bytes(fs::path(root) / "sizes" / "t10k-images-idx3-ubyte", img);
  expect_bad_input(run_telar({"train", "--model", "mlp:784-10", "--data",
                              "mnist:" + root + "/sizes", "--epochs", "1", "--out", out}),
                   "[1, 32, 32]");
  EXPECT_FALSE(fs::exists(out)) << "no run directory after bad input";
  fs::remove_all(root);
}

TEST(CliFoundation, BadOptionsAndModelsAreOneLineErrors) {
  const std::string out = fresh_temp_dir("opts") + "/run";
  auto base = quick_train(out);
  auto with = [&](std::vector<std::string> extra) {
    auto a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return run_telar(a);
  };
  expect_bad_input(with({"--model", "resnet50"}), "unknown model");
  expect_bad_input(with({"--frobnicate"}), "frobnicate");
  expect_bad_input(with({"--batch-size", "0"}), "--batch-size");
  expect_bad_input(with({"--classes", "0"}), "--classes");  // was silently ignored
  expect_bad_input(with({"--optimizer", "adamw"}), "adamw");
  // A Linear whose input width does not match: 28x28 images into an MLP declared for 100 inputs.
  expect_bad_input(with({"--model", "mlp:100-10"}), "100");
  EXPECT_FALSE(fs::exists(out)) << "no run directory after bad input";
  expect_bad_input(run_telar({"frobnicate"}), "unknown command");
  // A mistyped option or sub-command: the nearest that exists.
  expect_bad_input(with({"--epoch", "2"}), "unknown option '--epoch' (did you mean --epochs?)");
  expect_bad_input(run_telar({"lut", "biuld", "--model", "mnist_cnn"}),
                   "unknown sub-command 'biuld' (did you mean build?)");
  // A negative value is not an option: the mistyped one beside it is found.
  expect_bad_input(with({"--lr", "-0.5", "--epoch", "2"}), "did you mean --epochs?");
  // --resume of what is not a training run says so (it asked for --model).
  expect_bad_input(run_telar({"train", "--resume", out, "--epochs", "2"}), "no such directory");
  fs::create_directories(out);
  expect_bad_input(run_telar({"train", "--resume", out}), "holds no run (no run.json)");
  telar::write_file_atomic(fs::path(out) / "run.json", R"({"command": "adapt", "config": {}})");
  expect_bad_input(run_telar({"train", "--resume", out}), "holds a run of 'adapt', not of 'train'");
}

TEST(CliFoundation, UnwritableOutputDirectory) {
  const std::string root = fresh_temp_dir("unwritable");
  std::ofstream(root + "/file") << "x";
  expect_bad_input(run_telar(quick_train(root + "/file/run")), "file/run");
}

TEST(CliFoundation, NonFiniteLossStopsAndKeepsLastGoodCheckpoint) {
  const std::string out = fresh_temp_dir("nan") + "/run";
  auto args = quick_train(out);
  args.insert(args.end(), {"--lr", "1e30", "--checkpoint-every", "1"});
  auto r = run_telar(args);
  expect_bad_input(r, "loss became");
  EXPECT_NE(r.err.find("step"), std::string::npos);
  EXPECT_NE(r.err.find("last good checkpoint"), std::string::npos) << r.err;
  // The checkpoint on disk is intact (checksum verified), records a step before the failure
  // and holds only finite parameters (a diverged state is never written).
  auto ckpt = telar::train::read_checkpoint(fs::path(out) / telar::train::kCheckpointFileName);
  EXPECT_GE(ckpt.trainer.global_step, 1);
  for (const auto& [name, t] : ckpt.parameters)
    for (float v : t.span<float>()) ASSERT_TRUE(std::isfinite(v)) << name;
  // Every step up to the failure was written (--checkpoint-every 1), unless the parameters
  // had already left the floating-point range, which the warning says.
  const auto failed_at = std::stoll(r.err.substr(r.err.find("(step ") + 6));
  EXPECT_LE(ckpt.trainer.global_step, failed_at);
}

// Issue 23, item 3: --checkpoint-every with a time bounds what a kill can lose. A run killed
// (SIGKILL: no clean stop) as soon as a checkpoint exists has one from inside the epoch, taken
// about a second in; the epoch's end (which would come later) has not written it.
TEST(CliFoundation, CheckpointEveryWithATimeWritesWithinTheEpoch) {
  const std::string root = fresh_temp_dir("every_time");
  const std::string out = root + "/run";
  const fs::path ckpt = fs::path(out) / telar::train::kCheckpointFileName;
  const int status = telar::testing::run_telar_and_signal(
      {"train", "--model", "mnist_cnn", "--data", "synthetic:16000:1x28x28:10", "--epochs", "1",
       "--batch-size", "8", "--threads", "1", "--quiet", "--checkpoint-every", "1s", "--out", out},
      [&] {
        std::error_code ec;
        return fs::exists(ckpt, ec);
      },
      SIGKILL, 0, 60.0);
  ASSERT_NE(status, -2) << "no checkpoint appeared";
  const auto written = telar::train::read_checkpoint(ckpt);
  EXPECT_EQ(written.trainer.epoch, 0);
  EXPECT_GT(written.trainer.step_in_epoch, 0);
  EXPECT_LT(written.trainer.step_in_epoch, 2000);
  // A bad interval is refused before anything is written.
  auto bad = quick_train(root + "/bad");
  bad.insert(bad.end(), {"--checkpoint-every", "10 minutes"});
  expect_bad_input(run_telar(bad), "--checkpoint-every");
  EXPECT_FALSE(fs::exists(root + "/bad"));
  fs::remove_all(root);
}

// Issue 23, item 1: a training larger than the memory it may use is refused before anything
// is allocated or written, naming the estimate and the limit.
TEST(CliFoundation, ATrainingLargerThanTheMemoryIsRefusedBeforeItStarts) {
  const std::string root = fresh_temp_dir("too_large");
  auto small_limit = quick_train(root + "/limit");
  small_limit.insert(small_limit.end(), {"--max-memory", "100K"});
  expect_bad_input(run_telar(small_limit), "more than the 102 KB of --max-memory");
  EXPECT_FALSE(fs::exists(root + "/limit"));
  // 2 billion hidden units: terabytes, more than any machine this runs on has available.
  auto huge = quick_train(root + "/huge");
  huge[2] = "mlp:784-2000000000-10";
  expect_bad_input(run_telar(huge), "this machine has available");
  EXPECT_FALSE(fs::exists(root + "/huge"));
  auto bad = quick_train(root + "/bad");
  bad.insert(bad.end(), {"--max-memory", "lots"});
  expect_bad_input(run_telar(bad), "--max-memory");
  // The same model within its limit trains.
  auto fits = quick_train(root + "/fits");
  fits.insert(fits.end(), {"--max-memory", "1G"});
  EXPECT_EQ(run_telar(fits).status, 0);
  fs::remove_all(root);
}

TEST(CliFoundation, ACheckpointIsNeverWrittenWithNonFiniteParameters) {
  const std::string out = fresh_temp_dir("inf") + "/run";
  auto args = quick_train(out);
  // lr 3e38 with a huge weight decay throws the first update's parameters past the float
  // range (warnings are printed without --quiet).
  args.erase(std::find(args.begin(), args.end(), "--quiet"));
  args.insert(args.end(), {"--lr", "3e38", "--weight-decay", "1e6", "--checkpoint-every", "1"});
  auto r = run_telar(args);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("no longer finite"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no checkpoint was written"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(fs::path(out) / telar::train::kCheckpointFileName));
  const auto run = nlohmann::json::parse(std::ifstream(out + "/run.json"));
  EXPECT_EQ(run["status"], "stopped: non-finite loss");
}

TEST(CliFoundation, EvalOfTheValidationSplitMatchesTheRun) {
  const std::string out = fresh_temp_dir("evalval") + "/run";
  auto args = quick_train(out);
  args.insert(args.end(), {"--validation", "0.25", "--json", "--seed", "3"});
  auto t = run_telar(args);
  ASSERT_EQ(t.status, 0) << t.err;
  const auto trained = nlohmann::json::parse(t.out.substr(t.out.rfind("\n{") + 1));
  auto e = run_telar({"eval", "--checkpoint", out, "--data", "synthetic:256:1x28x28:10", "--split",
                      "validation", "--json"});
  ASSERT_EQ(e.status, 0) << e.err;
  const auto evaluated = nlohmann::json::parse(e.out.substr(e.out.rfind("\n{") + 1));
  EXPECT_EQ(evaluated["samples"], 64);  // a quarter of the 256 training samples
  EXPECT_EQ(trained["validation"]["samples"], 64);
  EXPECT_NE(trained["test"]["samples"], 64);
  EXPECT_DOUBLE_EQ(evaluated["accuracy"].get<double>(),
                   trained["validation"]["accuracy"].get<double>());
  EXPECT_NEAR(evaluated["loss"].get<double>(), trained["validation"]["loss"].get<double>(), 1e-5);
  // Without --data, the data the run was trained on (as its options record it).
  auto own = run_telar({"eval", "--checkpoint", out, "--split", "validation", "--json"});
  ASSERT_EQ(own.status, 0) << own.err;
  EXPECT_NE(own.out.find("on synthetic/train (validation part) (64 samples)"), std::string::npos)
      << own.out;
  EXPECT_EQ(nlohmann::json::parse(own.out.substr(own.out.rfind("\n{") + 1))["accuracy"],
            evaluated["accuracy"]);
  expect_bad_input(run_telar({"eval", "--checkpoint", out, "--data", "synthetic:256:1x28x28:10",
                              "--validation", "0.1"}),
                   "--split validation");
}

TEST(CliFoundation, ProfilingOptionsOfTrainAreChecked) {
  const std::string root = fresh_temp_dir("trainprof");
  auto with_opts = [&](std::vector<std::string> extra) {
    auto a = quick_train(root + "/run");
    a.insert(a.end(), extra.begin(), extra.end());
    return run_telar(a);
  };
  expect_bad_input(with_opts({"--profile-domain", "user"}), "needs --profile");
  expect_bad_input(with_opts({"--profile", "task-clock", "--profile-domain", "usr"}),
                   "--profile-domain");
  expect_bad_input(with_opts({"--profile", "task-clock", "--profile-cpus", "9999"}),
                   "--profile-cpus");
  expect_bad_input(with_opts({"--momentum", "nan"}), "momentum");
  expect_bad_input(with_opts({"--epochs", "0"}), "give a whole number >= 1");
  EXPECT_FALSE(fs::exists(root + "/run"));
  // The seed's colon format, appended during training.
  auto ok = with_opts({"--profile", "task-clock,page-faults", "--profile-colon", root + "/c.txt"});
  ASSERT_EQ(ok.status, 0) << ok.err;
  std::ifstream in(root + "/c.txt");
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_NE(line.find("::task-clock"), std::string::npos) << line;
}

// Issue 23, item 2: a finished run is never overwritten by accident. train and infer into a
// training run are refused (exit 2, the way out named) and leave it as it was; --overwrite
// replaces it; --resume still continues it.
TEST(CliFoundation, AnExistingRunIsRefusedUnlessOverwritten) {
  const std::string out = fresh_temp_dir("reuse") + "/run";
  ASSERT_EQ(run_telar(quick_train(out)).status, 0);
  const std::string checkpoint = telar::read_file(fs::path(out) / "checkpoint.telar");
  const std::string run_json = telar::read_file(fs::path(out) / "run.json");

  auto again = run_telar(quick_train(out));
  expect_bad_input(again, "--overwrite");
  EXPECT_NE(again.err.find("holds a run of 'train' (finished)"), std::string::npos) << again.err;
  auto infer = run_telar(
      {"infer", "--model", "mlp:784-32-10", "--batch", "2", "--repeats", "2", "--out", out});
  expect_bad_input(infer, "--overwrite");
  EXPECT_EQ(telar::read_file(fs::path(out) / "checkpoint.telar"), checkpoint);
  EXPECT_EQ(telar::read_file(fs::path(out) / "run.json"), run_json);

  // --resume continues the same run (one more epoch).
  ASSERT_EQ(run_telar({"train", "--resume", out, "--epochs", "2", "--quiet"}).status, 0);
  EXPECT_NE(telar::read_file(fs::path(out) / "checkpoint.telar"), checkpoint);

  // --overwrite replaces it: a fresh one-epoch run, with nothing of the old one left; but never
  // a directory holding what no run writes (a user's notes: refused, nothing removed).
  auto replace = quick_train(out);
  replace.push_back("--overwrite");
  telar::write_file_atomic(fs::path(out) / "notes.txt", "the user's");
  expect_bad_input(run_telar(replace), "holds notes.txt, which no telar run writes");
  EXPECT_EQ(telar::read_file(fs::path(out) / "notes.txt"), "the user's");
  fs::remove(fs::path(out) / "notes.txt");
  telar::write_file_atomic(fs::path(out) / "leftover.csv", "from the old run");
  ASSERT_EQ(run_telar(replace).status, 0);
  EXPECT_FALSE(fs::exists(fs::path(out) / "leftover.csv"));
  const auto j = nlohmann::json::parse(telar::read_file(fs::path(out) / "run.json"));
  EXPECT_EQ(j["config"]["epochs"], 1);
  fs::remove_all(fs::path(out).parent_path());
}

namespace {

// Trains mnist_cnn on synthetic data (one epoch, batch 8, seed 5) with `extra` options, sends
// `signal` once run.json says "running", and checks the clean stop (exit status `status`,
// run.json "interrupted" with the signal and a batch inside the epoch, a checkpoint) and that
// the resumed run ends with the losses of an uninterrupted one. Skips when the run finished
// before the signal arrived.
void expect_clean_stop_and_exact_resume(const std::string& name,
                                        const std::vector<std::string>& extra, int signal,
                                        int status_expected) {
  const std::string root = fresh_temp_dir(name);
  auto args = [&](const std::string& out) {
    std::vector<std::string> a{
        "train",    "--model", "mnist_cnn",    "--data", "synthetic:3000:1x28x28:10",
        "--epochs", "1",       "--batch-size", "8",      "--seed",
        "5",        "--quiet", "--json",       "--out",  out};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const std::string out = root + "/interrupted";
  const int status = telar::testing::run_telar_and_signal(
      args(out), [&] { return telar::testing::run_json_says_running(out); }, signal, 200, 20.0);
  ASSERT_NE(status, -2) << "the training never started";
  ASSERT_NE(status, -1) << "killed instead of stopping cleanly";
  if (status == 0) GTEST_SKIP() << "the run finished before the signal arrived";
  ASSERT_EQ(status, status_expected);
  const auto stopped = nlohmann::json::parse(telar::read_file(fs::path(out) / "run.json"));
  EXPECT_EQ(stopped["status"], "interrupted");
  EXPECT_EQ(stopped["interrupted"]["signal"], signal == SIGINT ? "SIGINT" : "SIGTERM");
  EXPECT_GT(stopped["interrupted"]["next_batch"].get<std::int64_t>(), 0);
  ASSERT_TRUE(fs::exists(fs::path(out) / "checkpoint.telar"));

  auto resumed = run_telar({"train", "--resume", out, "--quiet", "--json"});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  auto straight = run_telar(args(root + "/straight"));
  ASSERT_EQ(straight.status, 0) << straight.err;
  const auto a = last_json_line(resumed.out), b = last_json_line(straight.out);
  EXPECT_EQ(a["test"]["loss"], b["test"]["loss"]);
  EXPECT_EQ(a["train"]["loss"], b["train"]["loss"]);
  EXPECT_EQ(nlohmann::json::parse(telar::read_file(fs::path(out) / "run.json"))["status"],
            "finished");
  fs::remove_all(root);
}

}  // namespace

// Issue 23, item 3: Ctrl-C (SIGINT) stops training at the next batch with a checkpoint there,
// run.json says "interrupted", the exit status is 130 and the message says how to resume; the
// resumed run ends where an uninterrupted one does.
TEST(CliFoundation, SigintStopsAtABatchAndTheResumedRunMatchesAnUninterruptedOne) {
  expect_clean_stop_and_exact_resume("sigint", {"--threads", "1"}, SIGINT, 130);
}

// The same for data-parallel training: the workers (threads of one process) agree on the
// batch to stop after, the leader writes the checkpoint there, and the resumed group ends
// where an uninterrupted one does.
TEST(CliFoundation, SigtermStopsADataParallelRunAtOneBatchAndItResumesToTheSameResult) {
  expect_clean_stop_and_exact_resume("sigterm_dp", {"--workers", "cpu:threads=1,cpu:threads=1"},
                                     SIGTERM, 143);
}

TEST(CliFoundation, CheckpointOfAnotherModelOrCorruptedIsRefused) {
  const std::string out = fresh_temp_dir("ckpt") + "/run";
  ASSERT_EQ(run_telar(quick_train(out)).status, 0);
  auto other = quick_train(out);
  other[2] = "mlp:784-64-10";
  other.insert(other.end(), {"--resume", out, "--epochs", "2"});
  other.erase(std::find(other.begin(), other.end(), "--out"),
              std::find(other.begin(), other.end(), "--out") + 2);
  expect_bad_input(run_telar(other), "model");
  // Flip one byte in the middle of the checkpoint.
  const fs::path ckpt = fs::path(out) / "checkpoint.telar";
  std::fstream f(ckpt, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(fs::file_size(ckpt) / 2));
  char c = 0;
  f.read(&c, 1);
  f.seekp(static_cast<std::streamoff>(fs::file_size(ckpt) / 2));
  c = static_cast<char>(c ^ 0x5a);
  f.write(&c, 1);
  f.close();
  expect_bad_input(run_telar({"eval", "--checkpoint", out, "--data", "synthetic:256:1x28x28:10"}),
                   "corrupt");
}

TEST(CliFoundation, ResumeGivesTheSameLossesAsAnUninterruptedRun) {
  // A model with dropout, so the random stream must be resumed too.
  // The resumed run is given only the directory and the new epoch count: the model, data,
  // optimizer and seed come from the run it continues.
  auto run = [](const std::string& out, const std::string& epochs, bool resume) {
    if (resume) return run_telar({"train", "--resume", out, "--epochs", epochs, "--quiet"});
    return run_telar({"train",
                      "--model",
                      "mnist_cnn",
                      "--data",
                      "synthetic:192:1x28x28:10",
                      "--epochs",
                      epochs,
                      "--batch-size",
                      "32",
                      "--threads",
                      "1",
                      "--momentum",
                      "0.9",
                      "--lr",
                      "0.01",
                      "--quiet",
                      "--seed",
                      "5",
                      "--out",
                      out});
  };
  const std::string root = fresh_temp_dir("resume");
  ASSERT_EQ(run(root + "/whole", "2", false).status, 0);
  ASSERT_EQ(run(root + "/split", "1", false).status, 0);
  auto r = run(root + "/split", "2", true);
  ASSERT_EQ(r.status, 0) << r.err;
  auto losses = [](const std::string& dir) {
    std::ifstream in(dir + "/metrics.csv");
    std::string line;
    std::vector<std::string> rows;
    while (std::getline(in, line))
      if (line.rfind("1,", 0) == 0 && line.find(",train,loss,") != std::string::npos)
        rows.push_back(line);
    return rows;
  };
  auto whole = losses(root + "/whole"), split = losses(root + "/split");
  ASSERT_EQ(whole.size(), 7u);  // 6 batches of epoch 2 and its whole-epoch row
  EXPECT_EQ(whole, split);
  // The resumed run's metrics.csv still holds the first epoch.
  std::ifstream in(root + "/split/metrics.csv");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\n0,-1,train,loss,"), std::string::npos);
}
