// Coverage of PyTorch's exporter: torchvision 0.14 classifiers (random weights, BatchNorm
// statistics randomised) exported by PyTorch 1.13 at opsets 13 and 17 by
// tests/onnx/export_torchvision.py into the build folder, imported, run on telar's CPU backend,
// and compared with PyTorch's outputs: max |telar - torch| <= 1e-4 * max |torch|. The models
// telar cannot import yet must fail with one error naming the node and its op type.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "backend/backend.hpp"
#include "core/error.hpp"
#include "core/npy.hpp"
#include "onnx/import.hpp"

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

bool torchvision_available() {
  static const bool ok =
      std::system("/usr/bin/python3 -c 'import torch, torchvision' >/dev/null 2>&1") == 0;
  return ok;
}

// The exported model's path (exported once; later runs reuse the files in the build folder).
fs::path exported(const Case& c) {
  const fs::path dir = fs::path(TELAR_BINARY_DIR) / "onnx_fixtures";
  fs::create_directories(dir);
  const fs::path stem = dir / (c.model + "-opset" + std::to_string(c.opset));
  if (!fs::exists(stem.string() + ".y.npy")) {
    const std::string cmd = "/usr/bin/python3 " TELAR_SOURCE_DIR
                            "/tests/onnx/export_torchvision.py '" +
                            dir.string() + "' " + c.model + " " + std::to_string(c.opset) + " " +
                            std::to_string(c.size) + " > '" + stem.string() + ".log' 2>&1";
    if (std::system(cmd.c_str()) != 0)
      throw std::runtime_error("exporting " + c.model + " failed; see " + stem.string() + ".log");
  }
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
  auto exe = backend::compile(backend::parse_backend_spec("cpu"), m.graph, m.weights);
  exe->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
  const Tensor& t = exe->output(0);
  ASSERT_EQ(t.shape(), y.shape());
  double diff = 0, scale = 0;
  for (std::int64_t i = 0; i < y.numel(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(t.f32()[i] - y.f32()[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(y.f32()[i])));
  }
  ASSERT_GT(scale, 0.0);
  EXPECT_LE(diff, 1e-4 * scale) << "max difference " << diff << " for outputs up to " << scale;
}

INSTANTIATE_TEST_SUITE_P(
    Torchvision, TorchvisionMatchesPyTorch,
    ::testing::Values(Case{"alexnet", 13, 224}, Case{"alexnet", 17, 224}, Case{"vgg11_bn", 13, 224},
                      Case{"vgg11_bn", 17, 224}, Case{"resnet18", 13, 64}, Case{"resnet18", 17, 64},
                      Case{"resnet50", 13, 64}, Case{"resnet50", 17, 64},
                      Case{"resnext50_32x4d", 13, 64}, Case{"resnext50_32x4d", 17, 64},
                      Case{"mobilenet_v2", 13, 64}, Case{"mobilenet_v2", 17, 64}),
    case_name);

struct Refused {
  const char* model;
  const char* node_and_op;  // what the error must name
};

class TorchvisionNotYetImported : public ::testing::TestWithParam<Refused> {};

TEST_P(TorchvisionNotYetImported, FailsWithOneErrorNamingTheNodeAndOp) {
  if (!torchvision_available())
    GTEST_SKIP() << "python3-torch/python3-torchvision are not installed (scripts/setup.sh "
                    "installs them)";
  const fs::path stem = exported(Case{GetParam().model, 13, 64});
  try {
    import_model(stem.string() + ".onnx");
    FAIL() << GetParam().model << " imported; move it to TorchvisionMatchesPyTorch";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(GetParam().node_and_op), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Torchvision, TorchvisionNotYetImported,
    ::testing::Values(Refused{"densenet121", "(Pad)"},
                      Refused{"squeezenet1_1", "(MaxPool): attribute 'ceil_mode'"},
                      Refused{"googlenet", "(MaxPool): attribute 'ceil_mode'"},
                      Refused{"shufflenet_v2_x1_0", "(Reshape)"},
                      Refused{"mobilenet_v3_small", "(HardSigmoid)"}),
    [](const ::testing::TestParamInfo<Refused>& info) { return std::string(info.param.model); });

}  // namespace
}  // namespace telar::onnx
