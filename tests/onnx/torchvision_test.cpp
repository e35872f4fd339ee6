// Coverage of PyTorch's exporter: torchvision 0.14 classifiers (random weights, BatchNorm
// statistics randomised) exported by PyTorch 1.13 at opsets 13 and 17 by
// tests/onnx/export_torchvision.py into the user's cache folder (fixture_dir() below), imported,
// run on telar's CPU backend, and compared with PyTorch's outputs: max |telar - torch| <= 1e-4 *
// max |torch|. The same files prune: channels removed after their weights were zeroed leave the
// outputs unchanged.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "../adapt/prune_test_util.hpp"
#include "adapt/prune.hpp"
#include "backend/backend.hpp"
#include "backend/calibration.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/inference.hpp"
#include "core/error.hpp"
#include "core/npy.hpp"
#include "e2e/run_command.hpp"
#include "onnx/export.hpp"
#include "onnx/import.hpp"
#include "optimize/inference.hpp"

namespace telar::onnx {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string model;
  int opset;
  int size;  // input height and width
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return info.param.model + "_opset" + std::to_string(info.param.opset);
}

// The installed PyTorch and torchvision versions ("1.13.0 0.14.1", as their __version__ gives
// them); empty where either is missing. Read from the packages' metadata: importing torch costs
// each test process 3 s of CPU, and every case of this file is a process of its own.
const std::string& torch_versions() {
  static const std::string versions = [] {
    const auto r = telar::testing::run_shell(
        "/usr/bin/python3 -c 'from importlib.metadata import version as v; "
        "print(*(v(p).split(\"+\")[0] for p in (\"torch\", \"torchvision\")))'");
    return r.status == 0 ? telar::testing::last_line(r.out) : std::string();
  }();
  return versions;
}

bool torchvision_available() {
  return !torch_versions().empty();
}

// PyTorch's exports are the same bytes every time for the same export scripts and versions
// (fixed seeds), and cost a minute and a half of a fresh build's test run (vgg11_bn and alexnet
// write 0.5 GB each): they are kept in the user's cache folder, in a folder named by the
// scripts' hash (TELAR_ONNX_FIXTURE_KEY, computed by CMake) and the versions, so that a fresh
// clone reuses them. Folders of other keys are removed.
const fs::path& fixture_dir() {
  static const fs::path dir = [] {
    const char* cache = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    const fs::path base =
        (cache && *cache ? fs::path(cache) : fs::path(home && *home ? home : "/tmp") / ".cache") /
        "telar" / "onnx-fixtures";
    std::string key = std::string(TELAR_ONNX_FIXTURE_KEY) + "-torch" + torch_versions();
    for (char& c : key)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '-';
    const fs::path d = base / key;
    fs::create_directories(d);
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(base, ec))
      if (entry.path().filename() != key) fs::remove_all(entry.path(), ec);
    // What a killed export left (another test's export in progress is younger than an hour).
    for (const auto& entry : fs::directory_iterator(d, ec))
      if (entry.path().filename().string().starts_with(".partial-") &&
          fs::last_write_time(entry.path(), ec) <
              fs::file_time_type::clock::now() - std::chrono::hours(1))
        fs::remove_all(entry.path(), ec);
    return d;
  }();
  return dir;
}

// Runs tests/onnx/SCRIPT with `args` unless `made` exists in fixture_dir(): the script writes
// into a private folder whose files are then renamed into place, `made` last, so that a run
// killed half-way, or another test exporting the same file, never leaves a partial file where
// `made` says the export is complete.
void export_once(const fs::path& made, const std::string& args,
                 const std::string& script = "export_torchvision.py") {
  if (fs::exists(made)) return;
  const fs::path work = made.parent_path() / (".partial-" + std::to_string(::getpid()));
  fs::remove_all(work);
  fs::create_directories(work);
  const fs::path log = work / "export.log";
  const std::string cmd = "/usr/bin/python3 " TELAR_SOURCE_DIR "/tests/onnx/" + script + " '" +
                          work.string() + "' " + args + " > '" + log.string() + "' 2>&1";
  if (std::system(cmd.c_str()) != 0)
    throw std::runtime_error(script + " " + args + " failed; see " + log.string());
  for (const auto& entry : fs::directory_iterator(work))
    if (entry.path() != log && entry.path().filename() != made.filename())
      fs::rename(entry.path(), made.parent_path() / entry.path().filename());
  fs::rename(work / made.filename(), made);
  fs::remove_all(work);
}

// The exported model's path stem (.onnx, .x.npy, .y.npy).
fs::path exported(const Case& c) {
  const fs::path stem = fixture_dir() / (c.model + "-opset" + std::to_string(c.opset));
  export_once(stem.string() + ".y.npy",
              c.model + " " + std::to_string(c.opset) + " " + std::to_string(c.size));
  return stem;
}

class TorchvisionMatchesPyTorch : public ::testing::TestWithParam<Case> {};

TEST_P(TorchvisionMatchesPyTorch, WithinOneInTenThousand) {
  if (!torchvision_available())
    GTEST_SKIP() << "python3-torch/python3-torchvision are not installed (scripts/setup.sh "
                    "installs them); the fixtures are exported with them";
  const fs::path stem = exported(GetParam());
  ImportedModel m = import_model(stem.string() + ".onnx");
  const Tensor x = read_npy(stem.string() + ".x.npy");
  const Tensor y = read_npy(stem.string() + ".y.npy");
  // As imported, and as compiled for inference (fused residual sums and activations).
  for (const bool optimize : {false, true}) {
    auto exe = backend::compile_for_inference(backend::parse_backend_spec("cpu"), m.graph,
                                              m.weights, optimize);
    exe->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
    const Tensor& t = exe->output(0);
    ASSERT_EQ(t.shape(), y.shape());
    double diff = 0, scale = 0;
    for (std::int64_t i = 0; i < y.numel(); ++i) {
      diff = std::max(diff, static_cast<double>(std::fabs(t.f32()[i] - y.f32()[i])));
      scale = std::max(scale, static_cast<double>(std::fabs(y.f32()[i])));
    }
    ASSERT_GT(scale, 0.0);
    EXPECT_LE(diff, 1e-4 * scale) << "max difference " << diff << " for outputs up to " << scale
                                  << (optimize ? " (optimized)" : " (as imported)");
  }
}

// Opset 17 where PyTorch 1.13 writes other nodes at 17 than at 13: LayerNormalization (ConvNeXt,
// Swin), HardSwish (MobileNetV3 and the segmentation models on it), BatchNormalization's
// training_mode (DenseNet's, which no convolution absorbs) and Reshape's allowzero
// (ShuffleNet's). For the other models it writes the same ops, inputs and attribute names at
// both opsets (compared on the exports, 2026-11-29), so a second case would repeat the first.
INSTANTIATE_TEST_SUITE_P(
    Torchvision, TorchvisionMatchesPyTorch,
    ::testing::Values(
        Case{"alexnet", 13, 224}, Case{"vgg11_bn", 13, 224}, Case{"resnet18", 13, 64},
        Case{"resnet50", 13, 64}, Case{"resnext50_32x4d", 13, 64}, Case{"mobilenet_v2", 13, 64},
        Case{"densenet121", 13, 64}, Case{"densenet121", 17, 64}, Case{"squeezenet1_1", 13, 64},
        Case{"googlenet", 13, 64}, Case{"inception_v3", 13, 96}, Case{"shufflenet_v2_x1_0", 13, 64},
        Case{"shufflenet_v2_x1_0", 17, 64}, Case{"mobilenet_v3_small", 13, 64},
        Case{"mobilenet_v3_small", 17, 64}, Case{"mobilenet_v3_large", 13, 64},
        Case{"mobilenet_v3_large", 17, 64}, Case{"efficientnet_b0", 13, 64},
        Case{"regnet_y_400mf", 13, 64}, Case{"regnet_x_400mf", 13, 64}, Case{"mnasnet0_5", 13, 64},
        Case{"convnext_tiny", 13, 64}, Case{"convnext_tiny", 17, 64},
        Case{"lraspp_mobilenet_v3_large", 13, 64}, Case{"lraspp_mobilenet_v3_large", 17, 64},
        Case{"deeplabv3_mobilenet_v3_large", 13, 64}, Case{"deeplabv3_mobilenet_v3_large", 17, 64},
        Case{"swin_t", 13, 64}, Case{"swin_t", 17, 64}, Case{"maxvit_t", 13, 224}),
    case_name);

// A model of export_<name>.py exported at opsets 13 and 17 gives PyTorch's outputs; exported
// again by telar and imported, the same outputs bit for bit.
void expect_matches_pytorch_and_round_trips(const std::string& name) {
  for (int opset : {13, 17}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    const fs::path stem = fixture_dir() / (name + "-opset" + std::to_string(opset));
    export_once(stem.string() + ".y.npy", std::to_string(opset), "export_" + name + ".py");
    ImportedModel m = import_model(stem.string() + ".onnx");
    const Tensor x = read_npy(stem.string() + ".x.npy");
    const Tensor y = read_npy(stem.string() + ".y.npy");
    auto outputs_of = [&](const graph::Graph& g, graph::ParameterSet& w) {
      auto exe = backend::compile(backend::parse_backend_spec("cpu"), g, w);
      exe->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
      return exe->output(0).clone();
    };
    const Tensor t = outputs_of(m.graph, m.weights);
    ASSERT_EQ(t.shape(), y.shape());
    for (std::int64_t i = 0; i < y.numel(); ++i)
      ASSERT_NEAR(t.f32()[i], y.f32()[i], 1e-4f * (1.0f + std::fabs(y.f32()[i]))) << i;
    const fs::path again = fs::path(telar::testing::fresh_temp_dir("onnx_again")) /
                           (name + "-" + std::to_string(opset) + ".onnx");
    export_model(m.graph, m.weights, again, {opset, "test", {}, {}});
    ImportedModel back = import_model(again);
    const Tensor u = outputs_of(back.graph, back.weights);
    for (std::int64_t i = 0; i < y.numel(); ++i) ASSERT_EQ(u.f32()[i], t.f32()[i]) << i;
  }
}

// PyTorch's nn.ConvTranspose2d (stride, padding, output padding, groups, dilation, no bias).
TEST(OnnxConvTranspose, MatchesPyTorchAndRoundTrips) {
  if (!torchvision_available()) GTEST_SKIP() << "python3-torch is not installed";
  expect_matches_pytorch_and_round_trips("conv_transpose");
}

// A small vision transformer written batch-first, as Hugging Face's ViT and BERT write their
// attention (export_attention.py): a class token expanded over the batch, MatMul of queries and
// transposed keys, softmax over the last axis of [B, heads, L, L], layer norms, GELU, x[:, 0].
TEST(OnnxAttention, MatchesPyTorchAndRoundTrips) {
  if (!torchvision_available()) GTEST_SKIP() << "python3-torch is not installed";
  expect_matches_pytorch_and_round_trips("attention");
}

// torchvision's own vision transformer: nn.MultiheadAttention moves the batch off the first axis
// ([L, B, E]) and merges it with the heads ([L, B*H, d]), which the importer follows as views of
// batch-first tensors (axis_groups.hpp) until the batch is first again.
TEST(OnnxAttention, SequenceFirstMultiheadAttentionMatchesPyTorchAndRoundTrips) {
  if (!torchvision_available()) GTEST_SKIP() << "python3-torchvision is not installed";
  expect_matches_pytorch_and_round_trips("sequence_first");
}

// PyTorch's F.interpolate in each way telar imports as Resize (export_resize.py): bilinear with
// and without aligned corners, up and down, to one row; nearest by scale_factor 2 and to a
// fractional size. As built (the reference kernel) and compiled for inference (oneDNN's
// resampling where it computes the same), and exported back by telar.
TEST(OnnxResize, InterpolationsMatchPyTorchAndRoundTrip) {
  if (!torchvision_available()) GTEST_SKIP() << "python3-torch is not installed";
  expect_matches_pytorch_and_round_trips("resize");
  const fs::path stem = fixture_dir() / "resize-opset13";
  ImportedModel m = import_model(stem.string() + ".onnx");
  const Tensor x = read_npy(stem.string() + ".x.npy");
  const Tensor y = read_npy(stem.string() + ".y.npy");
  auto exe = backend::compile_for_inference(backend::parse_backend_spec("cpu"), m.graph, m.weights,
                                            /*optimize=*/true);
  exe->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
  ASSERT_EQ(exe->output(0).shape(), y.shape());
  for (std::int64_t i = 0; i < y.numel(); ++i)
    ASSERT_NEAR(exe->output(0).f32()[i], y.f32()[i], 1e-4f * (1.0f + std::fabs(y.f32()[i]))) << i;
}

// Its five layer norms (two per block, one at the end): opset 17's LayerNormalization imports as
// telar's LayerNorm; opset 13's nine ops stay nine ops, which inference compilation fuses into
// as many LayerNorms; a LayerNorm exported at opset 13 becomes the nine ops again, computing what
// it did.
TEST(OnnxAttention, LayerNormsImportFuseAndExportBeforeOpset17) {
  if (!torchvision_available()) GTEST_SKIP() << "python3-torch is not installed";
  std::map<int, ImportedModel> models;
  for (int opset : {13, 17}) {
    const fs::path stem = fixture_dir() / ("attention-opset" + std::to_string(opset));
    export_once(stem.string() + ".y.npy", std::to_string(opset), "export_attention.py");
    models.emplace(opset, import_model(stem.string() + ".onnx"));
  }
  const auto layer_norms = [](const graph::Graph& g) {
    return std::count_if(g.nodes().begin(), g.nodes().end(),
                         [](const graph::Node& n) { return n.kind == graph::OpKind::LayerNorm; });
  };
  EXPECT_EQ(layer_norms(models.at(17).graph), 5);
  EXPECT_EQ(layer_norms(models.at(13).graph), 0);
  EXPECT_EQ(layer_norms(
                optimize::optimize_for_inference(models.at(13).graph, models.at(13).weights).graph),
            5);
  const Tensor x = read_npy((fixture_dir() / "attention-opset17.x.npy").string());
  const auto output_of = [&](const graph::Graph& g, graph::ParameterSet& w) {
    auto exe = backend::compile(backend::parse_backend_spec("cpu"), g, w);
    exe->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
    return exe->output(0).clone();
  };
  const fs::path file = fs::path(telar::testing::fresh_temp_dir("onnx_layer_norm")) / "13.onnx";
  export_model(models.at(17).graph, models.at(17).weights, file, {13, "test", {}, {}});
  ImportedModel back = import_model(file);
  EXPECT_EQ(layer_norms(back.graph), 0);
  const Tensor want = output_of(models.at(17).graph, models.at(17).weights);
  const Tensor got = output_of(back.graph, back.weights);
  ASSERT_EQ(got.shape(), want.shape());
  for (std::int64_t i = 0; i < want.numel(); ++i)
    EXPECT_NEAR(got.f32()[i], want.f32()[i], 1e-5f * (1.0f + std::fabs(want.f32()[i]))) << i;
}

// Imported classifiers (and DeepLabV3, whose ASPP branches meet in a Concat and pass Resizes)
// prune like the zoo's models: with every third channel of every prunable
// group removed after its weights were set to zero, the outputs stay those of the model as
// imported (with those weights zero).
class TorchvisionPruning : public ::testing::TestWithParam<Case> {};

TEST_P(TorchvisionPruning, RemovingChannelsWithZeroWeightsLeavesTheOutputsUnchanged) {
  if (!torchvision_available()) GTEST_SKIP() << "python3-torch/python3-torchvision are not installed";
  const fs::path stem = exported(GetParam());
  ImportedModel m = import_model(stem.string() + ".onnx");
  const Tensor x = read_npy(stem.string() + ".x.npy");
  const adapt::ChannelGroups groups(m.graph);
  const std::vector<int> prunable = groups.prunable();
  std::cout << GetParam().model << ": " << prunable.size() << " of " << groups.groups().size()
            << " channel groups prunable\n";
  ASSERT_FALSE(prunable.empty());
  std::map<int, std::vector<std::int64_t>> keep;
  std::map<int, std::set<std::int64_t>> removed;
  for (int group : prunable)
    for (std::int64_t ch = 0; ch < groups.groups()[static_cast<std::size_t>(group)].channels; ++ch)
      if (ch % 3 == 1)
        removed[group].insert(ch);
      else
        keep[group].push_back(ch);
  adapt::testing::zero_removed_channels(m.graph, m.weights, groups, removed);
  const auto output = [&](const graph::Graph& g, graph::ParameterSet& w) {
    auto exe = backend::compile(backend::parse_backend_spec("cpu"), g, w);
    exe->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
    return exe->output(0).clone();
  };
  const Tensor want = output(m.graph, m.weights);
  adapt::PrunedModel p = adapt::prune_channels(m.graph, m.weights, keep);
  EXPECT_LT(p.graph.parameter_count(), m.graph.parameter_count());
  const Tensor got = output(p.graph, p.params);
  double diff = 0, scale = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(got.f32()[i] - want.f32()[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(want.f32()[i])));
  }
  EXPECT_LE(diff, 1e-5 * scale) << "max difference " << diff << " for outputs up to " << scale;
}

INSTANTIATE_TEST_SUITE_P(
    Torchvision, TorchvisionPruning,
    ::testing::Values(Case{"resnet18", 13, 64}, Case{"resnet50", 13, 64},
                      Case{"resnext50_32x4d", 13, 64}, Case{"mobilenet_v2", 13, 64},
                      Case{"densenet121", 13, 64}, Case{"squeezenet1_1", 13, 64},
                      Case{"googlenet", 13, 64}, Case{"inception_v3", 13, 96},
                      Case{"shufflenet_v2_x1_0", 13, 64}, Case{"mobilenet_v3_small", 13, 64},
                      Case{"efficientnet_b0", 13, 64}, Case{"regnet_y_400mf", 13, 64},
                      Case{"mnasnet0_5", 13, 64}, Case{"deeplabv3_mobilenet_v3_large", 13, 64}),
    case_name);

// Imported classifiers at int8 (telar quantize's calibration and kernels): calibrated on the
// fixture's input and run on it, their outputs point where fp32's do (cosine similarity over
// the batch's logits), whatever ops surround the convolutions (concatenations, channel shuffles,
// squeeze-and-excitation, hard-swish: fp32 between int8 convolutions). (resnet50 was 0.984
// while residual summands were requantized to the ReLU'd output's u8 range, negatives clipped.)
class TorchvisionInt8 : public ::testing::TestWithParam<Case> {};

TEST_P(TorchvisionInt8, OutputsPointWhereFp32sDo) {
  if (!torchvision_available())
    GTEST_SKIP() << "python3-torch/python3-torchvision are not installed";
  if (!backend::cpu::has_int8())
    GTEST_SKIP() << "no VNNI here (oneDNN dispatches to " << backend::cpu::dispatched_isa() << ")";
  const fs::path stem = exported(GetParam());
  ImportedModel m = import_model(stem.string() + ".onnx");
  const Tensor x = read_npy(stem.string() + ".x.npy");
  auto table = std::make_shared<backend::QuantizationTable>(
      backend::calibrate(m.graph, m.weights, std::span<const Tensor>(&x, 1), {}));
  std::vector<Tensor> out;
  for (const auto precision : {backend::Precision::FP32, backend::Precision::INT8}) {
    backend::CompileOptions options;
    options.precision = precision;
    options.quantization = table;
    auto exe = backend::compile_for_inference(backend::parse_backend_spec("cpu"), m.graph,
                                              m.weights, true, options);
    exe->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
    out.push_back(exe->output(0).clone());
  }
  double ab = 0, aa = 0, bb = 0;
  for (std::int64_t i = 0; i < out[0].numel(); ++i) {
    ab += static_cast<double>(out[0].f32()[i]) * out[1].f32()[i];
    aa += static_cast<double>(out[0].f32()[i]) * out[0].f32()[i];
    bb += static_cast<double>(out[1].f32()[i]) * out[1].f32()[i];
  }
  const double cosine = ab / std::sqrt(aa * bb);
  std::cout << GetParam().model << ": cosine(int8, fp32) " << cosine << "\n";
  EXPECT_GE(cosine, 0.995) << GetParam().model;  // measured 0.9997 to 0.99999
}

INSTANTIATE_TEST_SUITE_P(Torchvision, TorchvisionInt8,
                         ::testing::Values(Case{"resnet50", 13, 64}, Case{"mobilenet_v2", 13, 64},
                                           Case{"densenet121", 13, 64}, Case{"googlenet", 13, 64},
                                           Case{"shufflenet_v2_x1_0", 13, 64},
                                           Case{"mobilenet_v3_small", 13, 64},
                                           Case{"efficientnet_b0", 13, 64},
                                           Case{"regnet_y_400mf", 13, 64}),
                         case_name);

// resnet18 with 10 classes exported for 3x32x32 inputs: fine-tuned on Fashion-MNIST (1x28x28,
// fed by replicating the channel and padding), its checkpoint evaluated again, and trained from
// scratch (--init random) after a training-mode export (BatchNorm kept).
fs::path exported_for_training(const std::string& mode) {
  const fs::path file = fixture_dir() / ("resnet18-10-" + mode + ".onnx");
  export_once(file, "resnet18 13 32 10 " + mode);
  return file;
}

double accuracy_of(const telar::testing::CommandResult& r) {
  return nlohmann::json::parse(telar::testing::last_line(r.out))["test"]["accuracy"].get<double>();
}

TEST(OnnxTraining, AnExportedResNetFineTunesOnFashionMnistAndEvaluatesTheSame) {
  if (!torchvision_available()) GTEST_SKIP() << "python3-torch/python3-torchvision are not installed";
  if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "Fashion-MNIST is not installed (scripts/setup.sh installs it)";
  const std::string run = telar::testing::fresh_temp_dir("onnx_train") + "/run";
  const std::vector<std::string> common{"--data", "fashion-mnist", "--epochs", "1",
                                        "--limit-batches", "40", "--batch-size", "64",
                                        "--lr", "0.05", "--seed", "0", "--quiet", "--json"};
  std::vector<std::string> args{"train", "--model", exported_for_training("train").string(),
                                "--init", "random", "--out", run};
  args.insert(args.end(), common.begin(), common.end());
  const auto scratch = telar::testing::run_telar(args);
  ASSERT_EQ(scratch.status, 0) << scratch.err;
  // 40 steps from PyTorch's initialisation: far above chance (0.1); measured 0.67.
  EXPECT_GE(accuracy_of(scratch), 0.5);
  const auto again = telar::testing::run_telar(
      {"eval", "--checkpoint", run, "--data", "fashion-mnist", "--json"});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NEAR(nlohmann::json::parse(telar::testing::last_line(again.out))["accuracy"].get<double>(),
              accuracy_of(scratch), 1e-9);

  // An inference-mode export (BatchNorm folded) fine-tunes from the file's weights.
  args = {"train", "--model", exported_for_training("eval").string(), "--out", run + "_eval"};
  args.insert(args.end(), common.begin(), common.end());
  const auto tuned = telar::testing::run_telar(args);
  ASSERT_EQ(tuned.status, 0) << tuned.err;
  EXPECT_GE(accuracy_of(tuned), 0.2);
}

// The peer runtime: onnxruntime-node, which bench/peer/install_ort.sh installs into a cache
// folder (tests download nothing); empty where it is not installed.
std::string ort_modules() {
  const char* dir = std::getenv("TELAR_ORT_DIR");
  const char* home = std::getenv("HOME");
  const fs::path base = dir ? fs::path(dir) : fs::path(home ? home : "/root") / ".cache/telar/ort";
  const fs::path modules = base / "node_modules";
  return fs::exists(modules / "onnxruntime-node" / "package.json") ? modules.string() : "";
}

// Fashion-MNIST's test set as DIR/x.npy and DIR/y.npy: pixels / 255 (as telar reads them),
// labels as float32.
bool write_test_set_npy(const std::string& dir) {
  const std::string to_npy =
      "/usr/bin/python3 -c \"import gzip, sys, numpy as np; d = sys.argv[1]; "
      "x = np.frombuffer(gzip.open(d + '/t10k-images-idx3-ubyte.gz').read()[16:], np.uint8); "
      "y = np.frombuffer(gzip.open(d + '/t10k-labels-idx1-ubyte.gz').read()[8:], np.uint8); "
      "np.save(sys.argv[2] + '/x.npy', (x.reshape(-1, 1, 28, 28) / 255.0).astype(np.float32)); "
      "np.save(sys.argv[2] + '/y.npy', y.astype(np.float32))\" "
      "/usr/share/datasets/fashion-mnist '" +
      dir + "'";
  return std::system(to_npy.c_str()) == 0;
}

// What the ONNX Runtime peer tests lack here ("" where they can run).
std::string peer_missing(const std::string& modules) {
  if (!torchvision_available()) return "python3-torch is not installed";
  if (modules.empty())
    return "ONNX Runtime is not installed: run bench/peer/install_ort.sh (npm's "
           "onnxruntime-node into ~/.cache/telar/ort)";
  if (!fs::exists("/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"))
    return "Fashion-MNIST is not installed";
  return "";
}

// ONNX Runtime's {"accuracy", "samples"} for MODEL on DIR's test set (write_test_set_npy).
nlohmann::json ort_accuracy(const std::string& modules, const std::string& model,
                            const std::string& dir) {
  const auto ort = telar::testing::run_shell(
      "NODE_PATH='" + modules + "' node '" TELAR_SOURCE_DIR "/bench/peer/ort_run.js' '" + model +
      "' --accuracy '" + dir + "/x.npy' '" + dir + "/y.npy'");
  EXPECT_EQ(ort.status, 0) << ort.err;
  return ort.status == 0 ? nlohmann::json::parse(telar::testing::last_line(ort.out))
                         : nlohmann::json{{"accuracy", -1.0}, {"samples", 0}};
}

// onnx.checker (full) on FILE, then how many nodes of each of OPS it has, space-separated.
std::string checked_op_counts(const std::string& file, const std::vector<std::string>& ops) {
  std::string counts;
  for (const std::string& op : ops) counts += (counts.empty() ? "c['" : ", c['") + op + "']";
  const auto checked = telar::testing::run_shell(
      "/usr/bin/python3 -c \"import onnx, sys, collections; m = onnx.load(sys.argv[1]); "
      "onnx.checker.check_model(m, full_check=True); "
      "c = collections.Counter(n.op_type for n in m.graph.node); print(" +
      counts + ")\" '" + file + "'");
  EXPECT_EQ(checked.status, 0) << checked.err;
  return telar::testing::last_line(checked.out);
}

// DIR/run quantized by telar (DIR/int8) and exported as QDQ (DIR/int8.onnx): ONNX's checker
// accepts the file, which has `counts` of `ops`, and ONNX Runtime classifies the test set as
// telar's int8 kernels do, within `tolerance` (their requantization rounds in other places).
void expect_qdq_export_classifies_as_int8(const std::string& modules, const std::string& dir,
                                          const std::vector<std::string>& ops,
                                          const std::string& counts, double tolerance) {
  const auto quantized =
      telar::testing::run_telar({"quantize", "--checkpoint", dir + "/run", "--calibration-batches",
                                 "8", "--out", dir + "/int8", "--json"});
  if (quantized.status == 2 && quantized.err.find("VNNI") != std::string::npos) return;
  ASSERT_EQ(quantized.status, 0) << quantized.err;
  const double int8_accuracy =
      nlohmann::json::parse(telar::testing::last_line(quantized.out))["accuracy_int8"];
  EXPECT_GE(int8_accuracy, 0.4);  // far above chance (0.1)
  const auto qdq = telar::testing::run_telar(
      {"export", "--checkpoint", dir + "/int8", "--out", dir + "/int8.onnx"});
  ASSERT_EQ(qdq.status, 0) << qdq.err;
  EXPECT_NE(qdq.out.find("int8 QDQ"), std::string::npos) << qdq.out;
  EXPECT_EQ(checked_op_counts(dir + "/int8.onnx", ops), counts);
  const double ort_int8 = ort_accuracy(modules, dir + "/int8.onnx", dir)["accuracy"].get<double>();
  EXPECT_NEAR(ort_int8, int8_accuracy, tolerance)
      << "telar int8 " << int8_accuracy << ", ONNX Runtime on the QDQ export " << ort_int8;
}

// A telar-trained mnist_cnn, exported, classifies Fashion-MNIST's test set in ONNX Runtime as
// in telar; quantized and exported as QDQ, as telar's int8 kernels do.
TEST(OnnxRuntimePeer, AnExportedTrainedMnistCnnHasTelarsAccuracy) {
  const std::string modules = ort_modules();
  if (const std::string why = peer_missing(modules); !why.empty()) GTEST_SKIP() << why;
  const std::string dir = telar::testing::fresh_temp_dir("onnx_ort");
  const auto trained = telar::testing::run_telar(
      {"train", "--model", "mnist_cnn", "--data", "fashion-mnist", "--epochs", "1",
       "--limit-batches", "60", "--batch-size", "64", "--lr", "0.05", "--seed", "0", "--quiet",
       "--json", "--out", dir + "/run"});
  ASSERT_EQ(trained.status, 0) << trained.err;
  const double telar_accuracy = accuracy_of(trained);
  const auto exported = telar::testing::run_telar(
      {"export", "--checkpoint", dir + "/run", "--out", dir + "/mnist_cnn.onnx"});
  ASSERT_EQ(exported.status, 0) << exported.err;
  ASSERT_TRUE(write_test_set_npy(dir));
  const nlohmann::json result = ort_accuracy(modules, dir + "/mnist_cnn.onnx", dir);
  EXPECT_EQ(result["samples"].get<int>(), 10000);
  // The same predictions up to rounding: at most 2 of 10000 near-ties may go the other way.
  EXPECT_NEAR(result["accuracy"].get<double>(), telar_accuracy, 2e-4)
      << "telar " << telar_accuracy << ", ONNX Runtime " << result["accuracy"].get<double>();
  // mnist_cnn compiled for inference: its input and the outputs of its 2 Conv (ReLU fused), 2
  // MaxPool and Flatten quantized (the Gemms' stay float); their 6 DequantizeLinear, and the
  // weights and biases of the 2 Conv and 2 Gemm behind 8 more. A few of 10000 predictions may
  // differ.
  expect_qdq_export_classifies_as_int8(modules, dir, {"QuantizeLinear", "DequantizeLinear", "Conv"},
                                       "6 14 2", 1e-3);
}

// A small vision transformer written batch-first (bench/peer/vit_batch_first.py: 64 features,
// 2 heads, one block, patches of 32 on 224x224 images), exported by PyTorch, trained briefly by
// telar on Fashion-MNIST (the 28x28 images fitted to its input), quantized and exported as QDQ:
// its Linears over the tokens read their int8 weights through DequantizeLinear and a Transpose
// (MatMul wants them [in, out]), and ONNX Runtime classifies the test set as telar's int8
// kernels do (measured 0.13 pp apart; a wrong Transpose would fall to chance).
TEST(OnnxRuntimePeer, AQuantizedTransformerExportHasTelarsInt8Accuracy) {
  const std::string modules = ort_modules();
  if (const std::string why = peer_missing(modules); !why.empty()) GTEST_SKIP() << why;
  const std::string dir = telar::testing::fresh_temp_dir("onnx_ort_vit");
  const auto exported =
      telar::testing::run_shell("/usr/bin/python3 '" TELAR_SOURCE_DIR
                                "/bench/peer/torch_export.py' --model vit:64-2-1-32 "
                                "--input 3x224x224 --out '" +
                                dir + "/vit.onnx'");
  ASSERT_EQ(exported.status, 0) << exported.err;
  const auto trained = telar::testing::run_telar({"train",
                                                  "--model",
                                                  dir + "/vit.onnx",
                                                  "--data",
                                                  "fashion-mnist",
                                                  "--epochs",
                                                  "1",
                                                  "--limit-batches",
                                                  "150",
                                                  "--batch-size",
                                                  "64",
                                                  "--optimizer",
                                                  "adam",
                                                  "--lr",
                                                  "0.001",
                                                  "--seed",
                                                  "0",
                                                  "--quiet",
                                                  "--json",
                                                  "--out",
                                                  dir + "/run"});
  ASSERT_EQ(trained.status, 0) << trained.err;
  ASSERT_TRUE(write_test_set_npy(dir));
  // Six Linears over the tokens (queries, keys, values, the output projection, the MLP's two)
  // and the two attention products; the classifier's Gemm.
  expect_qdq_export_classifies_as_int8(modules, dir, {"MatMul", "Gemm"}, "8 1", 3e-3);
}

// The F.interpolate network of export_resize.py, imported and exported by telar at opsets 13
// and 18 (its Resizes with sizes read from the input's shape): ONNX's checker accepts the opset
// 13 file and ONNX Runtime computes PyTorch's outputs from both.
TEST(OnnxRuntimePeer, ExportedResizesRunInOnnxRuntimeAsInPyTorch) {
  const std::string modules = ort_modules();
  if (const std::string why = peer_missing(modules); !why.empty()) GTEST_SKIP() << why;
  const fs::path stem = fixture_dir() / "resize-opset13";
  export_once(stem.string() + ".y.npy", "13", "export_resize.py");
  ImportedModel m = import_model(stem.string() + ".onnx");
  const Tensor y = read_npy(stem.string() + ".y.npy");
  const std::string dir = telar::testing::fresh_temp_dir("onnx_ort_resize");
  for (int opset : {13, 18}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    const std::string file = dir + "/resize-" + std::to_string(opset) + ".onnx";
    export_model(m.graph, m.weights, file, {opset, "test", {}, {}});
    // Debian's python3-onnx (1.12) knows opsets up to 17: opset 18's file is checked by ONNX
    // Runtime alone.
    if (opset <= 17) {
      EXPECT_EQ(checked_op_counts(file, {"Resize"}), "12");
    }
    const auto ort = telar::testing::run_shell(
        "NODE_PATH='" + modules + "' node '" TELAR_SOURCE_DIR "/bench/peer/ort_run.js' '" + file +
        "' '" + stem.string() + ".x.npy' '" + dir + "/ort.npy'");
    ASSERT_EQ(ort.status, 0) << ort.err;
    const Tensor got = read_npy(dir + "/ort.npy");
    ASSERT_EQ(got.shape(), y.shape());
    for (std::int64_t i = 0; i < y.numel(); ++i)
      ASSERT_NEAR(got.f32()[i], y.f32()[i], 1e-4f * (1.0f + std::fabs(y.f32()[i]))) << i;
  }
}

}  // namespace
}  // namespace telar::onnx
