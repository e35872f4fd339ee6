// End-to-end tests of telar quantize (docs/quantize.md): a trained model calibrated, saved,
// and run at int8 by eval and bench; bad input refused with one line and nothing written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_expect.hpp"
#include "run_command.hpp"

namespace fs = std::filesystem;
using telar::testing::expect_refused;
using telar::testing::fresh_temp_dir;
using telar::testing::last_json;
using telar::testing::run_telar;

namespace {

const std::string kData = "synthetic:512:1x28x28:10";

// A mnist_cnn trained for one epoch on synthetic data: its run directory.
std::string trained_run(const std::string& dir) {
  const std::string run = dir + "/run";
  auto t = run_telar({"train", "--model", "mnist_cnn", "--data", kData, "--epochs", "1",
                      "--batch-size", "32", "--threads", "1", "--quiet", "--out", run});
  EXPECT_EQ(t.status, 0) << t.err;
  return run;
}

}  // namespace

TEST(Quantize, CalibratesSavesAndRunsAtInt8InEvalAndBench) {
  const std::string dir = fresh_temp_dir("quantize");
  const std::string run = trained_run(dir);
  const std::string q = dir + "/int8";
  auto r = run_telar({"quantize", "--checkpoint", run, "--data", kData, "--calibration-batches",
                      "4", "--batch-size", "16", "--out", q, "--json"});
  if (r.status == 2 && r.err.find("VNNI") != std::string::npos)
    GTEST_SKIP() << "no int8 kernels on this CPU: " << r.err;
  ASSERT_EQ(r.status, 0) << r.err;
  const auto result = last_json(r.out);
  ASSERT_TRUE(fs::exists(fs::path(q) / "checkpoint.telar"));
  ASSERT_TRUE(fs::exists(fs::path(q) / "quantization.json"));
  const auto table = nlohmann::json::parse(std::ifstream(fs::path(q) / "quantization.json"));
  EXPECT_EQ(table["format"], "telar-quantization");
  EXPECT_EQ(table["method"], "minmax");
  EXPECT_EQ(table["calibration_batches"], 4);
  // Every value of the graph compiled for inference has a range [min, max]: the input (the
  // synthetic images, standardized: negative and positive), and the convolutions' outputs
  // with their ReLU fused (never negative).
  const auto& ranges = table["ranges"];
  ASSERT_TRUE(ranges.contains("x") && ranges.contains("conv1.out")) << ranges.dump();
  for (const auto& [name, range] : ranges.items()) {
    ASSERT_EQ(range.size(), 2u) << name;
    EXPECT_LE(range[0].get<double>(), range[1].get<double>()) << name;
  }
  EXPECT_LT(ranges["x"][0].get<double>(), 0.0);
  EXPECT_GT(ranges["x"][1].get<double>(), 0.0);
  EXPECT_EQ(ranges["conv1.out"][0].get<double>(), 0.0);
  EXPECT_GT(ranges["conv1.out"][1].get<double>(), 0.0);
  EXPECT_EQ(result["values"].get<std::size_t>(), table["ranges"].size());

  // eval runs the quantized model at int8 by default, with quantize's int8 accuracy; at fp32
  // on request, with the fp32 accuracy.
  auto e = run_telar({"eval", "--checkpoint", q, "--data", kData, "--json"});
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_EQ(last_json(e.out)["precision"], "int8");
  EXPECT_DOUBLE_EQ(last_json(e.out)["accuracy"].get<double>(),
                   result["accuracy_int8"].get<double>());
  auto f = run_telar({"eval", "--checkpoint", q, "--data", kData, "--precision", "fp32", "--json"});
  ASSERT_EQ(f.status, 0) << f.err;
  EXPECT_DOUBLE_EQ(last_json(f.out)["accuracy"].get<double>(),
                   result["accuracy_fp32"].get<double>());

  // bench puts fp32 and int8 side by side by default.
  auto b = run_telar({"bench", "--checkpoint", q, "--duration", "0.01", "--warmup", "0",
                      "--min-iterations", "2", "--json"});
  ASSERT_EQ(b.status, 0) << b.err;
  const auto points = last_json(b.out)["points"];
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0]["precision"], "fp32");
  EXPECT_EQ(points[1]["precision"], "int8");
  EXPECT_NE(b.out.find("cpu int8"), std::string::npos) << b.out;
  // A target that runs fp32 only (a simulated accelerator) gets fp32 alone by default.
  const std::string sim = std::string("sim:") + TELAR_SOURCE_DIR + "/configs/tpu_16_16_pes.cfg";
  auto s = run_telar({"bench", "--checkpoint", q, "--target", "cpu," + sim, "--duration", "0.01",
                      "--warmup", "0", "--min-iterations", "2", "--json"});
  ASSERT_EQ(s.status, 0) << s.err;
  const auto mixed = last_json(s.out)["points"];
  ASSERT_EQ(mixed.size(), 3u);
  EXPECT_EQ(mixed[2]["precision"], "fp32");

  // The percentile method clips: its ranges are at most min/max's.
  const std::string p = dir + "/int8p";
  auto pr = run_telar({"quantize", "--checkpoint", run, "--data", kData, "--calibration-batches",
                       "4", "--batch-size", "16", "--calibration", "percentile", "--percentile",
                       "99", "--no-accuracy", "--out", p});
  ASSERT_EQ(pr.status, 0) << pr.err;
  const auto clipped = nlohmann::json::parse(std::ifstream(fs::path(p) / "quantization.json"));
  EXPECT_EQ(clipped["method"], "percentile");
  bool smaller = false;
  for (const auto& [name, range] : clipped["ranges"].items()) {
    EXPECT_LE(range[1].get<double>(), table["ranges"][name][1].get<double>() + 1e-6) << name;
    smaller = smaller || range[1].get<double>() < table["ranges"][name][1].get<double>();
  }
  EXPECT_TRUE(smaller) << "the 99th percentile clipped no range";

  // Mixed precision: a convolution kept in fp32 is recorded, and the model runs.
  const std::string mixed_dir = dir + "/mixed";
  auto mx = run_telar({"quantize", "--checkpoint", run, "--data", kData, "--calibration-batches",
                       "2", "--batch-size", "16", "--exclude", "conv1", "--no-accuracy",
                       "--sensitivity", "--out", mixed_dir});
  ASSERT_EQ(mx.status, 0) << mx.err;
  const auto mixed_table =
      nlohmann::json::parse(std::ifstream(fs::path(mixed_dir) / "quantization.json"));
  EXPECT_EQ(mixed_table["excluded"], nlohmann::json::array({"conv1"}));
  // --sensitivity: every other convolution and Linear, most sensitive first, printed and kept.
  const auto& layers = mixed_table["sensitivity"];
  ASSERT_EQ(layers.size(), 3u) << mixed_table.dump();  // conv2, fc1, fc2
  for (std::size_t i = 0; i < layers.size(); ++i) {
    EXPECT_NE(layers[i]["node"], "conv1");
    EXPECT_NE(mx.out.find(layers[i]["node"].get<std::string>()), std::string::npos) << mx.out;
    if (i > 0) {
      EXPECT_LE(layers[i]["error"].get<double>(), layers[i - 1]["error"].get<double>());
    }
  }
  auto me = run_telar({"eval", "--checkpoint", mixed_dir, "--data", kData, "--json"});
  ASSERT_EQ(me.status, 0) << me.err;
  EXPECT_EQ(last_json(me.out)["precision"], "int8");
  // On the reference kernels (no int8) it runs at fp32 unless told otherwise.
  auto ref = run_telar(
      {"eval", "--checkpoint", mixed_dir, "--data", kData, "--backend", "cpu:ref", "--json"});
  ASSERT_EQ(ref.status, 0) << ref.err;
  EXPECT_EQ(last_json(ref.out)["precision"], "fp32");
  expect_refused(run_telar({"quantize", "--checkpoint", run, "--data", kData, "--exclude", "pool1",
                            "--out", dir + "/bad"}),
                 "--exclude pool1");
  EXPECT_FALSE(fs::exists(dir + "/bad"));

  // A quantized model runs inference only: training and adaptation refuse it.
  expect_refused(run_telar({"train", "--resume", q}), "quantized model");
  expect_refused(
      run_telar({"quantize", "--checkpoint", q, "--data", kData, "--out", dir + "/again"}),
      "quantized model");
  EXPECT_FALSE(fs::exists(dir + "/again"));
}

TEST(Quantize, BadInputIsRefusedBeforeAnythingIsWritten) {
  const std::string dir = fresh_temp_dir("quantize_bad");
  const std::string run = trained_run(dir);
  const std::string out = dir + "/int8";
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"quantize", "--checkpoint", run, "--out", out};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_telar(args);
  };
  // Calibration data of another sample shape than the model's input.
  expect_refused(with({"--data", "synthetic:64:1x32x32:10"}), "the model takes");
  expect_refused(with({"--data", kData, "--calibration-batches", "0"}), "at least 1");
  expect_refused(with({"--data", kData, "--calibration-batches", "100"}), "ask for fewer");
  expect_refused(with({"--data", kData, "--calibration", "entropy"}), "minmax or percentile");
  expect_refused(with({"--data", kData, "--percentile", "99"}), "add --calibration percentile");
  expect_refused(with({"--data", kData, "--calibration", "percentile", "--percentile", "0"}),
                 "out of range");
  EXPECT_FALSE(fs::exists(out));
  // int8 without calibration: bench and eval name the command that calibrates.
  expect_refused(run_telar({"bench", "--model", "mnist_cnn", "--precision", "int8"}),
                 "telar quantize");
  expect_refused(run_telar({"eval", "--checkpoint", run, "--data", kData, "--precision", "int8"}),
                 "telar quantize");
}
