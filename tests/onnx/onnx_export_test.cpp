// ONNX export: every zoo model written as ONNX and imported again gives bit-identical outputs;
// the ops ONNX import brings survive the round trip; the files pass onnx.checker (Debian's
// python3-onnx) where it is installed; what cannot be exported is one error, nothing written.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "backend/backend.hpp"
#include "core/error.hpp"
#include "core/npy.hpp"
#include "core/rng.hpp"
#include "dlrm/model.hpp"
#include "e2e/run_command.hpp"
#include "graph/builder.hpp"
#include "graph/zoo/zoo.hpp"
#include "onnx/export.hpp"
#include "onnx/import.hpp"
#include "train/test_support.hpp"

namespace telar::onnx {
namespace {

namespace fs = std::filesystem;

fs::path temp_file(const std::string& name) {
  static const train::testing::TempDir dir("onnx_export");
  return dir / name;
}

Tensor random_input(const graph::Graph& g, std::int64_t batch, std::uint64_t seed) {
  Tensor x(bind_batch(g.value(g.inputs()[0]).shape, batch));
  Rng rng(seed);
  for (float& v : x.span<float>()) v = rng.uniform(-1.0f, 1.0f);
  return x;
}

Tensor forward(const graph::Graph& g, graph::ParameterSet& weights, const Tensor& x) {
  auto exe = backend::compile(backend::parse_backend_spec("cpu"), g, weights);
  exe->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
  return exe->output(0).clone();
}

// The imported model's output on `x` is the source's, `want`, within 1e-6 relative.
void expect_imported_computes(const ImportedModel& imported, const Tensor& x, const Tensor& want) {
  graph::ParameterSet weights = imported.weights;
  const Tensor got = forward(imported.graph, weights, x);
  ASSERT_EQ(got.shape(), want.shape());
  for (std::int64_t i = 0; i < want.numel(); ++i)
    EXPECT_NEAR(got.f32()[i], want.f32()[i], 1e-6f * (1.0f + std::fabs(want.f32()[i]))) << i;
}

bool onnx_checker_available() {
  static const bool ok = std::system("/usr/bin/python3 -c 'import onnx' >/dev/null 2>&1") == 0;
  return ok;
}

// onnx.checker with full_check (which runs ONNX's shape inference too).
void expect_checker_passes(const fs::path& file) {
  if (!onnx_checker_available()) {
    std::cout << "[ SKIPPED  ] onnx.checker: python3-onnx is not installed (scripts/setup.sh "
                 "installs it)\n";
    return;
  }
  const std::string cmd = "/usr/bin/python3 -c \"import onnx, sys; "
                          "onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)\" '" +
                          file.string() + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << file << " fails onnx.checker";
}

struct ZooCase {
  const char* spec;
  Shape input;
};

class ZooRoundTrip : public ::testing::TestWithParam<ZooCase> {};

TEST_P(ZooRoundTrip, ImportingTheExportGivesIdenticalOutputs) {
  graph::zoo::ModelOptions options;
  options.input = GetParam().input;
  if (std::string(GetParam().spec).rfind("mlp", 0) != 0) options.classes = 7;
  const graph::Graph g = graph::zoo::build(GetParam().spec, options);
  graph::ParameterSet weights = graph::ParameterSet::initialize(g, 5);
  const fs::path file = temp_file(std::string(g.name()) + ".onnx");
  export_model(g, weights, file);
  expect_checker_passes(file);
  ImportedModel back = import_model(file);
  const Tensor x = random_input(g, 3, 9);
  const Tensor want = forward(g, weights, x), got = forward(back.graph, back.weights, x);
  ASSERT_EQ(got.shape(), want.shape());
  for (std::int64_t i = 0; i < want.numel(); ++i)
    ASSERT_EQ(got.f32()[i], want.f32()[i]) << GetParam().spec << " element " << i;
  EXPECT_EQ(back.graph.parameter_count(), g.parameter_count());
  EXPECT_EQ(back.producer.rfind("telar", 0), 0u) << back.producer;
}

INSTANTIATE_TEST_SUITE_P(
    Zoo, ZooRoundTrip,
    ::testing::Values(ZooCase{"mlp:12-8-5", {12}}, ZooCase{"mnist_cnn", {1, 28, 28}},
                      ZooCase{"mobilenet_v1:0.25", {3, 32, 32}}, ZooCase{"resnet18", {3, 32, 32}},
                      ZooCase{"resnet34", {3, 32, 32}}, ZooCase{"alexnet", {3, 67, 67}}),
    [](const ::testing::TestParamInfo<ZooCase>& info) {
      std::string n = info.param.spec;
      for (char& c : n)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return n;
    });

// The ops ONNX import brings, and SiLU and GELU, in one graph, at opset 13 (HardSwish written as x
// * HardSigmoid(x), LayerNorm as nine ops), 14 (HardSwish itself), 17 (LayerNormalization) and
// 18 (ReduceMean's axes an input).
TEST(OnnxExport, TheImportedOpsSurviveTheRoundTrip) {
  using namespace graph;
  GraphBuilder b("imported_ops");
  Graph& g0 = b.graph();
  ValueId x = b.input("x", {2, 5, 5});
  PadAttrs pad;
  pad.top = 1, pad.right = 2, pad.value = -0.5f;
  ValueId h = g0.add_node(OpKind::Pad, "pad", pad, {x});
  h = b.conv2d(h, 4, 3, 1, 1, 1, true, "conv");
  ConvTranspose2dAttrs up;  // 3x3, stride 1, pad 1, 2 groups: the same size
  up.in_channels = up.out_channels = 4;
  up.kernel_h = up.kernel_w = 3;
  up.pad_h = up.pad_w = 1;
  up.groups = 2;
  h = g0.add_node(
      OpKind::ConvTranspose2d, "deconv", up,
      {h, g0.add_parameter("deconv.weight", {4, 2, 3, 3}, Initializer::uniform(-0.3f, 0.3f)),
       g0.add_parameter("deconv.bias", {4}, Initializer::uniform(-0.1f, 0.1f))});
  h = g0.add_node(OpKind::LeakyReLU, "leaky", EltwiseAttrs{0.1f, 0.0f}, {h});
  ReshapeAttrs groups;
  groups.dims = {2, 2, 6, 7};
  h = g0.add_node(OpKind::Reshape, "group", groups, {h});
  TransposeAttrs perm;
  perm.perm = {0, 2, 1, 3, 4};
  h = g0.add_node(OpKind::Transpose, "shuffle", perm, {h});
  ReshapeAttrs back;
  back.dims = {4, 6, 7};
  h = g0.add_node(OpKind::Reshape, "ungroup", back, {h});
  ValueId first = g0.add_node(OpKind::Slice, "first", SliceAttrs{1, 0, 2, {}}, {h});
  ValueId second = g0.add_node(OpKind::Slice, "second", SliceAttrs{1, 2, 4, {}}, {h});
  ValueId scale = g0.add_parameter("scale", {2, 1, 1}, Initializer::uniform(0.5f, 1.5f));
  ValueId gate = g0.add_node(OpKind::HardSigmoid, "gate", EltwiseAttrs{0.2f, 0.5f}, {second});
  h = g0.add_node(OpKind::Mul, "excite", {}, {g0.add_node(OpKind::Mul, "scaled", {}, {first, scale}), gate});
  ValueId divisor = g0.add_parameter("divisor", {1, 1, 7}, Initializer::uniform(1.0f, 2.0f));
  h = g0.add_node(OpKind::Sub, "diff", {}, {g0.add_node(OpKind::Div, "ratio", {}, {h, divisor}), second});
  h = g0.add_node(OpKind::HardSwish, "swish", {}, {h});
  h = g0.add_node(OpKind::SiLU, "silu", {}, {h});  // written as x * Sigmoid(x)
  h = g0.add_node(OpKind::GELU, "gelu", {}, {h});  // written as x * (Erf(x / sqrt 2) + 1) / 2
  // GELU's and a layer norm's pieces: Pow, Sqrt, Erf, a mean over the channels.
  h = g0.add_node(OpKind::Pow, "cube", EltwiseAttrs{3.0f, 0.0f}, {h});
  ValueId mean = g0.add_node(OpKind::ReduceMean, "mean", ReduceAttrs{1}, {h});
  h = g0.add_node(OpKind::Erf, "erf", {}, {g0.add_node(OpKind::Sub, "centred", {}, {h, mean})});
  h = g0.add_node(OpKind::Sqrt, "root", {}, {g0.add_node(OpKind::Mul, "square", {}, {h, h})});
  // A LayerNorm over the last axis: LayerNormalization from opset 17, its nine ops before.
  h = g0.add_node(OpKind::LayerNorm, "norm", LayerNormAttrs{.features = 7, .eps = 0.1f},
                  {h, g0.add_parameter("norm.scale", {7}, Initializer::uniform(0.5f, 1.5f)),
                   g0.add_parameter("norm.bias", {7}, Initializer::uniform(-0.5f, 0.5f))});
  b.output(b.linear(b.flatten(b.global_avgpool(h, "gap"), "flat"), 3, "fc"));
  const Graph g = b.finish();
  graph::ParameterSet weights = graph::ParameterSet::initialize(g, 3);
  const Tensor input = random_input(g, 2, 4);
  const Tensor want = forward(g, weights, input);
  for (int opset : {13, 14, 17, 18}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    const fs::path file = temp_file("imported_ops_" + std::to_string(opset) + ".onnx");
    export_model(g, weights, file, {opset, "test", {}, {}});
    // Debian's python3-onnx (1.12) knows opsets up to 17: opset 18's file is checked by the
    // round trip alone.
    if (opset <= 17) expect_checker_passes(file);
    ImportedModel m = import_model(file);
    EXPECT_EQ(m.opset, opset);
    // GELU's constants come back fixed (buffers), not as weights that training would move.
    EXPECT_EQ(m.graph.parameters().size(), g.parameters().size());
    expect_imported_computes(m, input, want);
  }
}

// A Linear over rows ([B, L, in]: tokens) is written as MatMul by the weight transposed, then
// Add of the bias (as PyTorch writes nn.Linear of tokens); import reads it back as a Linear. A
// weight only such Linears read is written once, transposed, under its own name (the imported
// model has as many weights); one a [B, in] Linear reads too is also written as it is.
TEST(OnnxExport, ALinearOverRowsBecomesMatMulAndAdd) {
  using namespace graph;
  for (bool shared : {false, true}) {
    SCOPED_TRACE(shared ? "a weight shared with a [B, in] Linear" : "weights of their own");
    GraphBuilder b("tokens");
    Graph& g0 = b.graph();
    ValueId x = b.input("x", {4, 6});
    ValueId w = g0.add_parameter("w", {6, 6}, Initializer::uniform(-0.5f, 0.5f));
    ValueId bias = g0.add_parameter("bias", {6}, Initializer::uniform(-0.5f, 0.5f));
    ValueId h = g0.add_node(OpKind::Linear, "fc1", LinearAttrs{6, 6, true, {}}, {x, w, bias});
    h = g0.add_node(OpKind::GELU, "gelu", {}, {h});
    h = b.linear(h, 5, "fc2", false);
    ValueId features = b.flatten(h, "flat");
    if (shared) {
      ValueId mean =
          b.flatten(g0.add_node(OpKind::ReduceMean, "mean", ReduceAttrs{1}, {x}), "mean2d");
      ValueId pooled =
          g0.add_node(OpKind::Linear, "pooled", LinearAttrs{6, 6, false, {}}, {mean, w});
      features = b.concat({features, pooled}, "both");
    }
    b.output(b.linear(features, 3, "head"));
    const Graph g = b.finish();
    graph::ParameterSet weights = graph::ParameterSet::initialize(g, 8);
    const Tensor input = random_input(g, 2, 5);
    const Tensor want = forward(g, weights, input);
    const fs::path file = temp_file(shared ? "rows_shared.onnx" : "rows.onnx");
    export_model(g, weights, file);
    expect_checker_passes(file);
    ImportedModel m = import_model(file);
    if (!shared) {
      EXPECT_EQ(m.graph.parameters().size(), g.parameters().size());
    }
    expect_imported_computes(m, input, want);
  }
}

// In QDQ form (a quantized model's export) a Linear over rows reads its int8 weights through
// DequantizeLinear (per output channel, axis 0 of [out, in]) and a Transpose to MatMul's
// [in, out]; the file passes onnx.checker.
TEST(OnnxExport, AQuantizedLinearOverRowsReadsItsWeightsTransposed) {
  using namespace graph;
  GraphBuilder b("tokens");
  ValueId x = b.input("x", {5, 8});
  b.output(b.linear(x, 6, "fc"));
  const Graph g = b.finish();
  graph::ParameterSet weights = graph::ParameterSet::initialize(g, 8);
  ExportOptions options;
  options.int8["x"] = int8_encoding(ValueRange{-2.0f, 2.0f});
  const fs::path file = temp_file("rows_qdq.onnx");
  export_model(g, weights, file, options);
  expect_checker_passes(file);
  if (!onnx_checker_available()) return;
  const std::string count =
      "/usr/bin/python3 -c \"import onnx, sys, collections; "
      "c = collections.Counter(n.op_type for n in onnx.load(sys.argv[1]).graph.node); "
      "sys.exit(0 if (c['MatMul'], c['Transpose'], c['DequantizeLinear'], c['Gemm']) == "
      "(1, 1, 3, 0) else 1)\" '" +
      file.string() + "'";
  EXPECT_EQ(std::system(count.c_str()), 0) << "op counts of " << file;
}

TEST(OnnxExport, WhatCannotBeExportedIsOneErrorAndNoFile) {
  dlrm::DlrmConfig config;
  config.embedding_dim = 2;
  config.table_rows = {10, 20};
  config.bottom = {4, 2};
  config.top = {3, 1};
  const graph::Graph g = dlrm::build_graph(config);
  graph::ParameterSet weights = graph::ParameterSet::initialize(g, 1);
  const fs::path file = temp_file("dlrm.onnx");
  train::testing::expect_error([&] { export_model(g, weights, file); },
                               {"(EmbeddingBag)", "no ONNX counterpart"});
  EXPECT_FALSE(fs::exists(file));
  const graph::Graph cnn = graph::zoo::build("mnist_cnn");
  graph::ParameterSet w = graph::ParameterSet::initialize(cnn, 1);
  train::testing::expect_error(
      [&] {
        export_model(cnn, w, file, {12, "", {}, {}});
      },
      {"opsets 13 to"});
  EXPECT_FALSE(fs::exists(file));
}

TEST(OnnxCli, ExportWritesACheckedFileAndRefusesBadRequests) {
  const fs::path out = temp_file("cli_mlp.onnx");
  auto r = telar::testing::run_telar({"export", "--model", "mlp:6-4-3", "--out", out.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("wrote"), std::string::npos) << r.out;
  expect_checker_passes(out);
  EXPECT_EQ(import_model(out).graph.parameter_count(), 6 * 4 + 4 + 4 * 3 + 3);
  // An existing file, no model, both sources, another extension, a missing directory.
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"export", "--model", "mlp:6-4-3", "--out", out.string()},
        {"export", "--out", temp_file("none.onnx").string()},
        {"export", "--model", "mlp:6-4-3", "--checkpoint", "runs/x", "--out",
         temp_file("both.onnx").string()},
        {"export", "--model", "mlp:6-4-3", "--out", temp_file("model.pt").string()},
        {"export", "--model", "mlp:6-4-3", "--out", "/nonexistent-dir/m.onnx"},
        {"export", "--model", "mlp:6-4-3", "--opset", "11", "--out", temp_file("o.onnx").string()}}) {
    const auto e = telar::testing::run_telar(bad);
    EXPECT_EQ(e.status, 2) << bad.back() << ": " << e.err;
    EXPECT_EQ(std::count(e.err.begin(), e.err.end(), '\n'), 1) << e.err;
  }
  EXPECT_FALSE(fs::exists(temp_file("none.onnx")));
  EXPECT_FALSE(fs::exists(temp_file("both.onnx")));
  EXPECT_FALSE(fs::exists(temp_file("o.onnx")));
}

}  // namespace
}  // namespace telar::onnx
