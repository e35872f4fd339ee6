// The oneDNN CPU backend against the reference kernels (cpu:ref): forward outputs and every
// parameter gradient, on the zoo models and on graphs that exercise layouts, accumulation of
// gradients and batch-size changes.
#include "backend/cpu/cpu_backend.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <dnnl.hpp>

#include "backend/backend.hpp"
#include "backend/cpu/plan.hpp"
#include "backend/cpu/shared_plan_memory.hpp"
#include "backend/inference.hpp"
#include "backend/measure.hpp"
#include "core/rng.hpp"
#include "graph/builder.hpp"
#include "graph/loss.hpp"
#include "graph/zoo/zoo.hpp"
#include "reduced_precision_cases.hpp"

using namespace telar;
using namespace telar::graph;

namespace {

Tensor random_tensor(const Shape& shape, std::uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  Tensor t(shape);
  Rng rng(seed);
  for (auto& v : t.span<float>()) v = rng.uniform(lo, hi);
  return t;
}

Tensor labels(std::int64_t batch, std::int64_t classes, std::uint64_t seed) {
  Tensor t({batch}, DType::I64);
  Rng rng(seed);
  for (auto& v : t.span<std::int64_t>()) v = static_cast<std::int64_t>(rng.below(classes));
  return t;
}

// Output gradients that seed backward from the loss (the graph's last output) alone.
std::vector<Tensor> loss_seed(const Graph& g) {
  Tensor one(Shape{});
  one.f32()[0] = 1.0f;
  std::vector<Tensor> seed(g.outputs().size());
  seed.back() = one;
  return seed;
}

// Cosine similarity of two tensors seen as vectors.
double cosine(const Tensor& a, const Tensor& b) {
  double ab = 0, aa = 0, bb = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    ab += static_cast<double>(a.f32()[i]) * b.f32()[i];
    aa += static_cast<double>(a.f32()[i]) * a.f32()[i];
    bb += static_cast<double>(b.f32()[i]) * b.f32()[i];
  }
  return aa == 0 && bb == 0 ? 1.0 : ab / std::sqrt(aa * bb + 1e-300);
}

// Largest |a - b| relative to the largest |b| (a scale-aware comparison for whole tensors).
double relative_difference(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.numel(), b.numel());
  double diff = 0, scale = 1e-12;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    diff = std::max(diff, static_cast<double>(std::abs(a.f32()[i] - b.f32()[i])));
    scale = std::max(scale, static_cast<double>(std::abs(b.f32()[i])));
  }
  return diff / scale;
}

// Output 0 of `g` on input `x`, compiled for inference on `spec` at `precision`.
Tensor inference_output(const Graph& g, ParameterSet& params, const Tensor& x, const char* spec,
                        bool optimize = true,
                        backend::Precision precision = backend::Precision::FP32) {
  backend::CompileOptions options;
  options.precision = precision;
  auto exe = backend::compile_for_inference(backend::parse_backend_spec(spec), g, params, optimize,
                                            options);
  exe->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
  return exe->output(0).clone();
}

// bf16's output within bf16 rounding of fp32's, and not fp32's exactly (bf16 did run).
void expect_bf16_rounding_of(const Tensor& bf16, const Tensor& fp32, const std::string& what) {
  const auto [diff, scale] = telar::testing::max_difference(bf16, fp32);
  EXPECT_GT(diff, 1e-7 * scale) << what << ": bf16 gave fp32's outputs exactly";
  EXPECT_LE(diff, 3e-2 * scale) << what;
}

struct Run {
  std::vector<Tensor> outputs;
  ParameterSet grads;
  ParameterSet params_after;  // buffers (BatchNorm running statistics) after the forward
};

Run run(const std::string& backend, const Graph& g, const ParameterSet& initial,
        const std::vector<Tensor>& inputs, bool train) {
  ParameterSet params = ParameterSet::initialize(g, 0);
  for (ValueId id : initial.ids()) params.at(id).copy_from(initial.at(id));
  auto exe = backend::compile(backend::parse_backend_spec(backend), g, params);
  exe->forward(inputs, train ? backend::Mode::Train : backend::Mode::Eval);
  Run r;
  for (std::size_t i = 0; i < g.outputs().size(); ++i) r.outputs.push_back(exe->output(i).clone());
  if (train) {
    const std::vector<Tensor> seeds = loss_seed(g);
    exe->backward(seeds);
    r.grads = ParameterSet::zeros_like_parameters(g);
    for (ValueId id : g.parameters()) r.grads.at(id).copy_from(exe->gradients().at(id));
  }
  r.params_after = std::move(params);
  return r;
}

// Deep ReLU networks: rounding differences in the forward pass flip a few ReLU masks near
// zero, which moves individual gradient entries by O(1) while leaving the gradient's
// direction intact. For them `deep` compares gradients by cosine similarity (a wrong layout,
// a lost accumulation or a wrong kernel gives far less than 0.999); outputs are compared
// element-wise in every case.
void expect_backends_agree(const Graph& model, const Shape& input, std::int64_t batch,
                           std::int64_t classes, double tolerance, bool deep = false) {
  Graph g = with_loss(model, LossKind::CrossEntropy);
  ParameterSet params = ParameterSet::initialize(g, 11);
  Shape x_shape = input;
  x_shape.insert(x_shape.begin(), batch);
  std::vector<Tensor> inputs = {random_tensor(x_shape, 5), labels(batch, classes, 6)};

  for (bool train : {false, true}) {
    SCOPED_TRACE(train ? "training mode" : "evaluation mode");
    Run ref = run("cpu:ref", g, params, inputs, train);
    Run fast = run("cpu", g, params, inputs, train);
    for (std::size_t i = 0; i < ref.outputs.size(); ++i)
      EXPECT_LT(relative_difference(fast.outputs[i], ref.outputs[i]), tolerance) << "output " << i;
    if (!train) continue;
    for (ValueId id : g.parameters()) {
      if (deep)
        EXPECT_GT(cosine(fast.grads.at(id), ref.grads.at(id)), 0.999)
            << "gradient of " << g.value(id).name;
      else
        EXPECT_LT(relative_difference(fast.grads.at(id), ref.grads.at(id)), tolerance)
            << "gradient of " << g.value(id).name;
    }
    for (ValueId id : g.buffers())
      EXPECT_LT(relative_difference(fast.params_after.at(id), ref.params_after.at(id)), tolerance)
          << "buffer " << g.value(id).name;
  }
}

// Two depthwise-separable blocks (MobileNetV2's kind: BatchNorm, then `activation`) on a
// 3x32x32 input, 10 classes.
Graph separable_blocks(OpKind activation) {
  GraphBuilder b("separable");
  ValueId y = b.input("x", {3, 32, 32});
  const auto act = [&](ValueId v, const std::string& name) {
    return activation == OpKind::ReLU6 ? b.relu6(v, name) : b.relu(v, name);
  };
  y = act(b.batchnorm2d(b.conv2d(y, 16, 3, 2, 1, 1, false, "stem"), "bn0"), "a0");
  for (int i = 1; i <= 2; ++i) {
    const std::string n = std::to_string(i);
    y = act(b.batchnorm2d(b.conv2d(y, 16 * i, 3, 1, 1, 16 * i, false, "dw" + n), "bn_dw" + n),
            "a_dw" + n);
    y = act(b.batchnorm2d(b.conv2d(y, 32 * i, 1, 1, 0, 1, false, "pw" + n), "bn_pw" + n),
            "a_pw" + n);
  }
  b.output(b.linear(b.flatten(b.global_avgpool(y, "gap"), "flat"), 10, "fc"));
  return b.finish();
}

}  // namespace

TEST(CpuBackend, MlpMatchesReference) {
  expect_backends_agree(zoo::build("mlp:64-32-16-10", {Shape{64}, std::nullopt}), {64}, 8, 10, 1e-4);
}

TEST(CpuBackend, MnistCnnMatchesReference) {
  expect_backends_agree(zoo::build("mnist_cnn"), {1, 28, 28}, 4, 10, 1e-4);
}

TEST(CpuBackend, MobileNetMatchesReference) {
  expect_backends_agree(zoo::build("mobilenet_v1:0.25", {Shape{3, 96, 96}, 10}), {3, 96, 96}, 4,
                        10, 1e-3, true);
}

TEST(CpuBackend, ResNet18MatchesReference) {
  expect_backends_agree(zoo::build("resnet18", {Shape{3, 40, 40}, 7}), {3, 40, 40}, 2, 7, 1e-3, true);
}

TEST(CpuBackend, AlexNetMatchesReference) {
  expect_backends_agree(zoo::build("alexnet", {Shape{3, 67, 67}, 5}), {3, 67, 67}, 2, 5, 1e-3, true);
}

TEST(CpuBackend, EveryOneDnnOpAndLayoutChangeMatchesReference) {
  GraphBuilder b("ops");
  ValueId x = b.input("x", {8, 11, 11});
  ValueId c1 = b.conv2d(x, 16, 3, 1, 1, 1, true, "c1");
  ValueId y = b.relu6(b.batchnorm2d(c1, "bn"), "r6");
  y = b.graph().add_node(OpKind::AvgPool2d, "avg", Pool2dAttrs{3, 3, 2, 2, 1, 1, false, {}}, {y});
  ValueId dw = b.conv2d(y, 16, 3, 1, 1, 16, false, "dw");
  ValueId g2 = b.conv2d(y, 16, 3, 1, 2, 4, true, "grouped", 2);
  ValueId s = b.add(b.sigmoid(dw, "sig"), b.tanh(g2, "tanh"), "add");
  s = b.graph().add_node(OpKind::LeakyReLU, "leaky", EltwiseAttrs{0.2f, 0.0f}, {s});
  s = b.graph().add_node(OpKind::HardSwish, "hswish", {}, {s});
  s = b.graph().add_node(OpKind::SiLU, "silu", {}, {s});
  s = b.graph().add_node(OpKind::GELU, "gelu", {}, {s});
  ValueId m = b.maxpool2d(s, 2, 2, 0, "max");
  ValueId gap = b.global_avgpool(m, "gap");
  ValueId f = b.flatten(c1, "flat");  // a blocked value read again by a plain consumer
  TransposeAttrs nhwc;  // a convolution's output to channels-last axes (oneDNN's reorder)
  nhwc.perm = {0, 2, 3, 1};
  ValueId t = b.graph().add_node(OpKind::Transpose, "to_nhwc", nhwc, {g2});
  TransposeAttrs nchw;  // and back, into a convolution (which reads it as it is laid out)
  nchw.perm = {0, 3, 1, 2};
  ValueId back = b.graph().add_node(OpKind::Transpose, "to_nchw", nchw, {t});
  ValueId c_back = b.conv2d(back, 4, 1, 1, 0, 1, true, "c_back");
  ValueId h =
      b.concat({gap, b.linear(f, 16, "fc_side"), b.linear(b.flatten(t, "flat_t"), 4, "fc_t"),
                b.linear(b.flatten(c_back, "flat_back"), 4, "fc_back")},
               "cat");
  ValueId logits = b.linear(b.softmax(h, "sm"), 6, "fc");
  b.output(logits);
  expect_backends_agree(b.finish(), {8, 11, 11}, 3, 6, 1e-4);
}

// A transformer's attention, as ONNX import builds it: heads split by a reshape and a
// transpose, scores by a MatMul of two computed tensors (oneDNN's matmul), softmax over the last
// axis of a rank-4 tensor (oneDNN's, along that axis), a class token expanded over the batch
// and concatenated in front; forward and every gradient against the reference kernels.
TEST(CpuBackend, AttentionMatchesReference) {
  GraphBuilder b("attention");
  ValueId x = b.input("x", {4, 6});  // 4 tokens of 6 features
  ReshapeAttrs heads;
  heads.dims = {4, 2, 3};
  TransposeAttrs by_head, keys;
  by_head.perm = {0, 2, 1, 3};  // [B, 2 heads, 4 tokens, 3]
  keys.perm = {0, 1, 3, 2};     // [B, 2, 3, 4]
  Graph& g = b.graph();
  ValueId q = g.add_node(OpKind::Transpose, "q", by_head,
                         {g.add_node(OpKind::Reshape, "split", heads, {x})});
  ValueId k = g.add_node(OpKind::Transpose, "k", keys, {q});
  ValueId scores = g.add_node(OpKind::MatMul, "scores", {}, {q, k});
  ValueId p = g.add_node(OpKind::Softmax, "p", {}, {scores});
  ValueId context = g.add_node(OpKind::MatMul, "context", {}, {p, q});  // [B, 2, 4, 3]
  ReshapeAttrs tokens;
  tokens.dims = {8, 3};
  ValueId cls =
      g.add_node(OpKind::Expand, "cls", {},
                 {x, g.add_parameter("cls_token", {1, 1, 3}, Initializer::uniform(-1, 1))});
  ValueId seq = b.concat({cls, g.add_node(OpKind::Reshape, "merge", tokens, {context})}, "seq");
  b.output(b.linear(b.flatten(seq, "flat"), 5, "fc"));
  expect_backends_agree(b.finish(), {4, 6}, 3, 5, 1e-4);
}

// Swin's windows: [B, H, W, C] split into 2x2 windows of 2x2 tokens and permuted window-major
// (rank 6), the features split into 2 heads and the heads moved before the tokens (rank 7), on
// oneDNN's reorders; forward and every gradient against the reference kernels.
TEST(CpuBackend, TransposesOfRanksSixAndSevenMatchReference) {
  GraphBuilder b("windows");
  ValueId x = b.input("x", {4, 4, 6});
  Graph& g = b.graph();
  ReshapeAttrs split, heads;
  split.dims = {2, 2, 2, 2, 6};     // [B, H/2, 2, W/2, 2, C]
  heads.dims = {2, 2, 2, 2, 2, 3};  // [B, H/2, W/2, 2, 2, heads, d]
  TransposeAttrs windows, by_head;
  windows.perm = {0, 1, 3, 2, 4, 5};
  by_head.perm = {0, 1, 2, 5, 3, 4, 6};
  ValueId w = g.add_node(OpKind::Transpose, "windows", windows,
                         {g.add_node(OpKind::Reshape, "split", split, {x})});
  ValueId h = g.add_node(OpKind::Transpose, "by_head", by_head,
                         {g.add_node(OpKind::Reshape, "heads", heads, {w})});
  b.output(b.linear(b.flatten(h, "flat"), 5, "fc"));
  expect_backends_agree(b.finish(), {4, 4, 6}, 3, 5, 1e-4);
}

// SqueezeNet's fire module and DenseNet's growth: channel concatenations of values that arrive
// in different layouts (a convolution's channels-last output, a depthwise one's; the network's
// plain input, which makes a concatenation plain), with channel counts the 16-wide blocks do not
// divide, one value concatenated twice and also read elsewhere, maps of 1 x 1, and a
// concatenation of features; forward and every gradient against the reference kernels.
Graph fire_modules() {
  GraphBuilder b("fire");
  ValueId x = b.input("x", {6, 9, 9});
  ValueId sq = b.relu(b.conv2d(x, 12, 1, 1, 0, 1, true, "squeeze"), "r0");
  ValueId e1 = b.relu(b.conv2d(sq, 20, 1, 1, 0, 1, true, "expand1x1"), "r1");
  ValueId e3 = b.relu(b.conv2d(sq, 20, 3, 1, 1, 1, true, "expand3x3"), "r3");
  ValueId dw = b.conv2d(e3, 20, 3, 1, 1, 20, false, "dw");
  ValueId cat = b.concat({e1, e3, dw}, "cat");  // 60 channels
  ValueId dense = b.concat({cat, b.conv2d(cat, 10, 3, 1, 1, 1, true, "growth"), e3}, "dense");
  ValueId y = b.maxpool2d(b.relu(dense, "r4"), 2, 2, 0, "pool");
  ValueId side = b.conv2d(b.concat({x, e1}, "with_input"), 8, 3, 1, 1, 1, true, "side");
  // Maps of 1 x 1, whose channels-last layout is also the plain one.
  ValueId dots = b.concat(
      {b.conv2d(dense, 6, 9, 1, 0, 1, true, "dot1"), b.conv2d(cat, 5, 9, 1, 0, 1, true, "dot2")},
      "dots");
  ValueId features = b.concat(
      {b.global_avgpool(y, "gap"), b.global_avgpool(side, "gap2"), b.flatten(dots, "dots_flat")},
      "f");
  b.output(b.linear(b.flatten(features, "flat"), 5, "fc"));
  return b.finish();
}

TEST(CpuBackend, ChannelConcatenationsMatchReference) {
  expect_backends_agree(fire_modules(), {6, 9, 9}, 3, 5, 1e-4);
}

// Between bf16 convolutions a concatenation keeps bf16; the result stays within bf16's
// rounding of fp32's.
TEST(CpuBackend, Bf16ConcatenationsStayWithinBf16RoundingOfFp32) {
  if (!backend::cpu::has_bf16())
    GTEST_SKIP() << "this CPU has no avx512_bf16 or AMX (oneDNN dispatches to "
                 << backend::cpu::dispatched_isa() << "); bf16 is refused here";
  const Graph g = fire_modules();
  ParameterSet params = ParameterSet::initialize(g, 3);
  const Tensor x = random_tensor({2, 6, 9, 9}, 4, 0.0f, 1.0f);
  expect_bf16_rounding_of(inference_output(g, params, x, "cpu", true, backend::Precision::BF16),
                          inference_output(g, params, x, "cpu"), "fire modules");
}

// Arithmetic with NumPy broadcasting, as imported models have it: squeeze-and-excitation's gate
// [B, C, 1, 1] times a convolution's channels-last output (and the gate first: Mul commutes), a
// per-channel weight [C, 1, 1] (also times a grouped convolution's output, which oneDNN keeps in
// 8-channel blocks, where its binary has no jit kernel), a divisor along the width [1, 1, W], a
// scalar, a difference of two values of one shape, and a broadcast first operand of Sub
// (which stays on the reference kernel); an inference plan runs them on oneDNN binary, against
// the reference.
TEST(CpuBackend, InferencePlansRunBroadcastingArithmeticOnOneDnn) {
  GraphBuilder b("broadcasting");
  Graph& g = b.graph();
  ValueId x = b.input("x", {5, 6, 7});
  ValueId c1 = b.relu(b.conv2d(x, 16, 3, 1, 1, 1, true, "c1"), "r1");
  ValueId c2 = b.conv2d(x, 16, 1, 1, 0, 1, true, "c2");
  ReshapeAttrs keep;
  keep.dims = {16, 1, 1};
  ValueId gate = g.add_node(OpKind::Reshape, "keepdims", keep,
                            {b.sigmoid(b.linear(b.global_avgpool(c1, "squeeze"), 16, "fc1"), "s")});
  ValueId excited = g.add_node(OpKind::Mul, "excite", {}, {c1, gate});
  ValueId excited_too = g.add_node(OpKind::Mul, "excite_first", {}, {gate, c2});
  ValueId weight = g.add_parameter("w", {16, 1, 1}, Initializer::uniform(0.5f, 1.5f));
  ValueId scaled = g.add_node(OpKind::Mul, "scale", {}, {excited, weight});
  ValueId divisor = g.add_parameter("divisor", {1, 1, 7}, Initializer::uniform(1.0f, 2.0f));
  ValueId ratio = g.add_node(OpKind::Div, "ratio", {}, {scaled, divisor});
  ValueId diff = g.add_node(OpKind::Sub, "diff", {}, {ratio, excited_too});
  ValueId lift = g.add_parameter("lift", {1}, Initializer::constant(0.25f));
  ValueId lifted = g.add_node(OpKind::Add, "lifted", {}, {diff, lift});
  ValueId flipped = g.add_node(OpKind::Sub, "flipped", {}, {weight, lifted});
  ValueId wide = b.conv2d(x, 48, 1, 1, 0, 1, true, "wide");
  ValueId grouped = b.conv2d(wide, 48, 3, 1, 1, 6, true, "grouped");  // 8 channels a group
  ValueId weight48 = g.add_parameter("w48", {48, 1, 1}, Initializer::uniform(0.5f, 1.5f));
  ValueId grouped_scaled = g.add_node(OpKind::Mul, "grouped_scale", {}, {grouped, weight48});
  ValueId features = b.concat(
      {b.global_avgpool(flipped, "gap"), b.global_avgpool(grouped_scaled, "gap2")}, "features");
  b.output(b.linear(b.flatten(features, "flat"), 4, "fc"));
  const Graph model = b.finish();
  ParameterSet params = ParameterSet::initialize(model, 2);
  const Tensor input = random_tensor({3, 5, 6, 7}, 8);
  const Tensor want = inference_output(model, params, input, "cpu:ref", /*optimize=*/false);
  EXPECT_LT(relative_difference(inference_output(model, params, input, "cpu", false), want), 1e-5);
  if (!backend::cpu::has_bf16()) return;  // (Bf16IsRefusedWhereItCannotRun says so)
  // In bf16 the full operands arrive in bf16 and the broadcast ones in f32.
  expect_bf16_rounding_of(
      inference_output(model, params, input, "cpu", false, backend::Precision::BF16), want,
      "broadcasting");
}

// Resize after a convolution (whose output oneDNN lays out in blocks or channels-last), each
// mode as the model's output: an inference plan runs linear (half pixels) and nearest by whole
// factors on oneDNN's resampling, in that layout (DNNL_VERBOSE's lines counted), aligned corners
// and fractional nearest on the reference kernel; every output element against the reference
// kernels, bf16 within its rounding.
TEST(CpuBackend, ResizeMatchesReference) {
  struct Case {
    const char* name;
    ResizeMode mode;
    std::int64_t h, w;
    bool align_corners;
    const char* onednn;  // the oneDNN algorithm it runs on, or nullptr
  };
  const Case cases[] = {{"up", ResizeMode::Linear, 13, 11, false, "resampling_linear"},
                        {"down", ResizeMode::Linear, 4, 3, false, "resampling_linear"},
                        {"corners", ResizeMode::Linear, 13, 11, true, nullptr},
                        {"twice", ResizeMode::Nearest, 12, 10, false, "resampling_nearest"},
                        {"fraction", ResizeMode::Nearest, 13, 11, false, nullptr}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    GraphBuilder b("resize");
    ValueId h = b.relu(b.conv2d(b.input("x", {3, 6, 5}), 16, 3, 1, 1, 1, true, "conv"), "r");
    ResizeAttrs a;
    a.mode = c.mode;
    a.align_corners = c.align_corners;
    a.out_h = c.h;
    a.out_w = c.w;
    b.output(b.graph().add_node(OpKind::Resize, c.name, a, {h}));
    const Graph model = b.finish();
    ParameterSet params = ParameterSet::initialize(model, 3);
    const Tensor input = random_tensor({2, 3, 6, 5}, 4);
    const Tensor want = inference_output(model, params, input, "cpu:ref", /*optimize=*/false);
    ::testing::internal::CaptureStdout();
    dnnl::set_verbose(1);
    const Tensor got = inference_output(model, params, input, "cpu", false);
    dnnl::set_verbose(0);
    const std::string verbose = ::testing::internal::GetCapturedStdout();
    EXPECT_LT(relative_difference(got, want), 1e-5);
    EXPECT_EQ(verbose.find(",resampling,") != std::string::npos, c.onednn != nullptr);
    if (c.onednn) {
      EXPECT_NE(verbose.find(c.onednn), std::string::npos) << verbose;
    }
    if (!backend::cpu::has_bf16()) continue;  // (Bf16IsRefusedWhereItCannotRun says so)
    expect_bf16_rounding_of(
        inference_output(model, params, input, "cpu", false, backend::Precision::BF16), want,
        c.name);
  }
}

// Linear's forward pass runs on oneDNN's inner product below 8 rows and on its matmul (the
// weights read as a transposed operand) from 8 up: both, with and without bias.
TEST(CpuBackend, LinearMatchesReferenceOnBothForwardPaths) {
  for (bool bias : {true, false})
    for (std::int64_t batch : {3, 8, 37}) {
      SCOPED_TRACE(fmt::format("bias {} batch {}", bias, batch));
      GraphBuilder b("linear");
      ValueId x = b.input("x", {45});
      b.output(b.linear(b.relu(b.linear(x, 33, "fc1", bias), "r"), 7, "fc2", bias));
      expect_backends_agree(b.finish(), {45}, batch, 7, 1e-5);
    }
}

// A Linear over the last axis of [B, L, in] (a transformer's tokens, ConvNeXt's pixels): oneDNN
// sees the B * L rows as one matrix, forward (training and inference, whose matmul reads the
// weights packed) and backward, against the reference kernels; bf16 within its rounding.
TEST(CpuBackend, LinearOverRowsMatchesReference) {
  for (std::int64_t batch : {1, 3}) {
    SCOPED_TRACE(fmt::format("batch {}", batch));
    GraphBuilder b("tokens");
    ValueId x = b.input("x", {6, 20});
    ValueId h = b.relu(b.linear(x, 24, "fc1"), "r");
    b.output(b.linear(b.flatten(b.linear(h, 4, "fc2", false), "flat"), 5, "head"));
    const Graph model = b.finish();
    expect_backends_agree(model, {6, 20}, batch, 5, 1e-5);
    ParameterSet params = ParameterSet::initialize(model, 4);
    const Tensor input = random_tensor({batch, 6, 20}, 9);
    const Tensor want = inference_output(model, params, input, "cpu:ref", false);
    EXPECT_LT(relative_difference(inference_output(model, params, input, "cpu"), want), 1e-5);
    if (!backend::cpu::has_bf16()) continue;
    expect_bf16_rounding_of(
        inference_output(model, params, input, "cpu", true, backend::Precision::BF16), want,
        "tokens");
  }
}

TEST(CpuBackend, DepthwiseSeparableBlocksMatchReference) {
  // Channel counts below and at the 16-wide blocking of the layouts oneDNN picks, strides 1
  // and 2, into BatchNorm, ReLU and a global average pool.
  for (int variant = 0; variant < 6; ++variant) {
    SCOPED_TRACE(variant);
    GraphBuilder b("block");
    const std::int64_t c = variant < 3 ? 8 : 16;
    const std::int64_t stride = (variant % 3) == 0 ? 1 : 2;
    const std::int64_t hw = (variant % 3) == 2 ? 12 : 7;
    ValueId x = b.input("x", {c, hw, hw});
    ValueId y = b.conv2d(x, c, 3, stride, 1, c, false, "dw");
    y = b.relu(b.batchnorm2d(y, "bn1"), "r1");
    y = b.conv2d(y, 2 * c, 1, 1, 0, 1, false, "pw");
    y = b.relu(b.batchnorm2d(y, "bn2"), "r2");
    y = b.global_avgpool(y, "gap");
    b.output(b.linear(y, 5, "fc"));
    expect_backends_agree(b.finish(), {c, hw, hw}, 8, 5, 1e-4);
  }
}

TEST(CpuBackend, BatchSizeChangesReuseNothingStale) {
  Graph g = with_loss(zoo::build("mnist_cnn"), LossKind::CrossEntropy);
  ParameterSet params = ParameterSet::initialize(g, 3);
  auto exe = backend::compile(backend::parse_backend_spec("cpu"), g, params);
  Tensor x5 = random_tensor({5, 1, 28, 28}, 1), x3 = x5.slice_rows(0, 3).clone();
  std::vector<Tensor> in5 = {x5, labels(5, 10, 2)};
  std::vector<Tensor> in3 = {x3, in5[1].slice_rows(0, 3).clone()};
  exe->forward(in3, backend::Mode::Eval);
  Tensor first = exe->output(0).clone();
  exe->forward(in5, backend::Mode::Eval);
  Tensor five = exe->output(0).clone();
  exe->forward(in3, backend::Mode::Eval);
  EXPECT_EQ(relative_difference(exe->output(0), first), 0.0);
  // The first three rows of the batch of five are the batch of three.
  EXPECT_LT(relative_difference(five.slice_rows(0, 3).clone(), first), 1e-5);
}

// release_plans() frees the plans (a batch sweep holds one at a time); the next forward plans
// again and computes the same outputs, for inference (with its thread choice) and training.
TEST(CpuBackend, ReleasedPlansAreMadeAgain) {
  const Graph model = zoo::build("mnist_cnn");
  ParameterSet params = ParameterSet::initialize(model, 3);
  const Tensor x = random_tensor({3, 1, 28, 28}, 1);
  auto infer =
      backend::compile_for_inference(backend::parse_backend_spec("cpu:threads=2"), model, params);
  infer->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
  const Tensor first = infer->output(0).clone();
  infer->release_plans();
  EXPECT_THROW(infer->output(0), Error);
  for (int k = 0; k < 3; ++k) {
    infer->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
    EXPECT_EQ(relative_difference(infer->output(0), first), 0.0) << k;
  }

  Graph g = with_loss(model, LossKind::CrossEntropy);
  ParameterSet p = ParameterSet::initialize(g, 3);
  auto train = backend::compile(backend::parse_backend_spec("cpu"), g, p);
  const std::vector<Tensor> in = {x, labels(3, 10, 2)};
  const std::vector<Tensor> seed = loss_seed(g);
  std::vector<Tensor> grads;
  for (int k = 0; k < 2; ++k) {
    train->set_random_stream(0);  // the same dropout masks
    train->forward(in, backend::Mode::Train);
    train->backward(seed);
    grads.push_back(train->gradients().at(g.parameters().front()).clone());
    train->release_plans();
  }
  EXPECT_EQ(relative_difference(grads[1], grads[0]), 0.0);
}

// What a plan holds: on the reference kernels (no layout copies, no kernel-owned buffers) each
// value's buffer once, which inference_memory_bytes counts for the batch (but a training plan's
// ReLU writes over fc1's output, 1,024 bytes, and its arena aligns each activation to 64 bytes:
// fc2's 160-byte output takes 192); on oneDNN's convolutions, with a buffer per value
// (reuse=off), more (blocked copies of values and weights, scratch space); nothing once the
// plans are released.
TEST(CpuBackend, PlannedBytesAreWhatThePlanHolds) {
  const Graph model = zoo::build("mlp:784-64-10");
  ParameterSet params = ParameterSet::initialize(model, 3);
  const Tensor x = random_tensor({4, 784}, 1);
  auto ref = backend::compile(backend::parse_backend_spec("cpu:ref"), model, params);
  EXPECT_EQ(ref->planned_bytes(), 0);
  ref->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
  EXPECT_EQ(ref->planned_bytes(), backend::inference_memory_bytes(model, 4) - 1024 + 32);
  const Graph cnn = zoo::build("mnist_cnn");
  ParameterSet cnn_params = ParameterSet::initialize(cnn, 3);
  const Tensor images = random_tensor({4, 1, 28, 28}, 1);
  auto dnnl =
      backend::compile(backend::parse_backend_spec("cpu:threads=1:reuse=off"), cnn, cnn_params);
  dnnl->forward(std::span<const Tensor>(&images, 1), backend::Mode::Eval);
  EXPECT_GT(*dnnl->planned_bytes(), backend::inference_memory_bytes(cnn, 4));
  dnnl->release_plans();
  EXPECT_EQ(dnnl->planned_bytes(), 0);
}

// An inference plan keeps its values in one arena, sharing memory between values that do not
// live at once. By hand, mlp:784-64-10 at batch 4 on cpu:ref (one plan, no oneDNN buffers):
// fc1's output (1,024 bytes) lives over steps 0-1, relu1's (1,024) over 1-2, fc2's (160, 192
// aligned: the graph's output) from step 2 on: relu1's beside fc1's, fc2's over fc1's: an arena
// of 2,048 bytes where the three alone take 2,208. The rest (input, parameters) as before.
TEST(CpuBackend, AnInferencePlansValuesShareAnArena) {
  const Graph model = zoo::build("mlp:784-64-10");
  ParameterSet params = ParameterSet::initialize(model, 3);
  const Tensor x = random_tensor({4, 784}, 1);
  backend::CompileOptions inference;
  inference.inference = true;
  auto ref =
      backend::compile(backend::parse_backend_spec("cpu:ref:threads=1"), model, params, inference);
  ref->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
  EXPECT_EQ(ref->planned_bytes(), backend::inference_memory_bytes(model, 4) - 2208 + 2048);
  auto own = backend::compile(backend::parse_backend_spec("cpu:ref:threads=1:reuse=off"), model,
                              params, inference);
  own->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
  EXPECT_EQ(own->planned_bytes(), backend::inference_memory_bytes(model, 4));
  EXPECT_EQ(relative_difference(ref->output(0), own->output(0)), 0.0);
  // A training forward is refused: backward would need the values the arena wrote over.
  EXPECT_THROW(ref->forward(std::span<const Tensor>(&x, 1), backend::Mode::Train), Error);
}

// Sharing memory changes no result: each zoo model compiled for inference (BatchNorm folded,
// activations and residual adds fused) computes the same bits with reuse=on and reuse=off, for
// two inputs one after the other (a value written over while still needed, or a kernel that
// relied on its buffer's previous content, would show in the second), and holds less.
TEST(CpuBackend, SharedMemoryComputesTheSameAsABufferPerValue) {
  struct Case {
    std::string model;
    Shape input;
  };
  for (const Case& c :
       {Case{"mnist_cnn", {3, 1, 28, 28}}, Case{"mobilenet_v1:0.25", {2, 3, 64, 64}},
        Case{"resnet18", {2, 3, 64, 64}}}) {
    SCOPED_TRACE(c.model);
    zoo::ModelOptions input;
    input.input = Shape(c.input.begin() + 1, c.input.end());
    const Graph g = zoo::build(c.model, input);
    ParameterSet params = ParameterSet::initialize(g, 4);
    auto shared =
        backend::compile_for_inference(backend::parse_backend_spec("cpu:threads=2"), g, params);
    auto own = backend::compile_for_inference(
        backend::parse_backend_spec("cpu:threads=2:reuse=off"), g, params);
    for (std::uint64_t seed : {11, 12}) {
      const Tensor x = random_tensor(c.input, seed);
      shared->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
      own->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
      EXPECT_EQ(relative_difference(shared->output(0), own->output(0)), 0.0) << seed;
    }
    EXPECT_LT(*shared->planned_bytes(), *own->planned_bytes());
  }
}

// Training shares memory too: activations' gradients whose lifetimes in backward do not meet
// share one arena, accumulation buffers and the layouts a backward step stages data in live in
// their step alone. The gradients of every parameter, and of the input where asked for, are
// the same bits with reuse=on and reuse=off over two training steps on different data (a
// gradient written over while still needed, or a kernel that relied on its buffer's previous
// content, would show in the second), and the plan holds less.
TEST(CpuBackend, SharedGradientMemoryComputesTheSameAsABufferPerGradient) {
  struct Case {
    std::string model;
    Shape input;
  };
  for (const Case& c : {Case{"mnist_cnn", {3, 1, 28, 28}},
                        Case{"mobilenet_v1:0.25", {2, 3, 64, 64}}, Case{"resnet18", {2, 3, 64, 64}},
                        Case{"alexnet", {2, 1, 64, 64}}, Case{"relu6 blocks", {2, 3, 32, 32}}}) {
    SCOPED_TRACE(c.model);
    zoo::ModelOptions input;
    input.input = Shape(c.input.begin() + 1, c.input.end());
    input.classes = 10;
    const Graph g = with_loss(
        c.model == "relu6 blocks" ? separable_blocks(OpKind::ReLU6) : zoo::build(c.model, input),
        LossKind::CrossEntropy);
    ParameterSet shared_params = ParameterSet::initialize(g, 4);
    ParameterSet own_params = ParameterSet::initialize(g, 4);
    if (c.model == "relu6 blocks") {
      // BatchNorm scales of 4: a good share of the ReLU6s' inputs lie above 6, where the
      // gradient stops as it does below 0.
      int scaled = 0;
      for (ValueId id : g.parameters()) {
        const std::string& name = g.value(id).name;
        if (name.rfind("bn", 0) != 0 || name.find(".weight") == std::string::npos) continue;
        for (ParameterSet* p : {&shared_params, &own_params})
          for (float& v : p->at(id).span<float>()) v = 4.0f;
        ++scaled;
      }
      ASSERT_EQ(scaled, 5);
    }
    backend::CompileOptions options;
    options.input_gradients = {g.inputs().front()};
    auto shared =
        backend::compile(backend::parse_backend_spec("cpu:threads=2"), g, shared_params, options);
    auto own = backend::compile(backend::parse_backend_spec("cpu:threads=2:reuse=off"), g,
                                own_params, options);
    const std::vector<Tensor> seed = loss_seed(g);
    for (std::uint64_t step : {21, 22}) {
      const std::vector<Tensor> in = {random_tensor(c.input, step), labels(c.input[0], 10, step)};
      for (auto* exe : {shared.get(), own.get()}) {
        exe->set_random_stream(step);  // the same dropout masks
        exe->forward(in, backend::Mode::Train);
        exe->backward(seed);
      }
      EXPECT_EQ(relative_difference(shared->input_gradient(0), own->input_gradient(0)), 0.0)
          << step;
      for (ValueId id : g.parameters())
        EXPECT_EQ(relative_difference(shared->gradients().at(id), own->gradients().at(id)), 0.0)
            << g.value(id).name << " " << step;
    }
    EXPECT_LT(*shared->planned_bytes(), *own->planned_bytes());
  }
}

// ReLU6 writes over its input in training as ReLU does (its backward tells where the gradient
// passes, 0 < x < 6, from the output): a ReLU6 network's training plan holds what the same
// network with ReLU holds, less than with reuse=off by its activations' outputs.
TEST(CpuBackend, ReLU6RunsInPlaceInTrainingAsReLUDoes) {
  const auto planned = [](OpKind activation, const char* spec) {
    const Graph g = with_loss(separable_blocks(activation), LossKind::CrossEntropy);
    ParameterSet params = ParameterSet::initialize(g, 5);
    auto exe = backend::compile(backend::parse_backend_spec(spec), g, params);
    exe->forward(std::vector<Tensor>{random_tensor({4, 3, 32, 32}, 1), labels(4, 10, 2)},
                 backend::Mode::Train);
    exe->backward(loss_seed(g));
    return *exe->planned_bytes();
  };
  const std::int64_t relu6 = planned(OpKind::ReLU6, "cpu:threads=1");
  EXPECT_EQ(relu6, planned(OpKind::ReLU, "cpu:threads=1"));
  EXPECT_EQ(planned(OpKind::ReLU6, "cpu:ref"), planned(OpKind::ReLU, "cpu:ref"));
  EXPECT_LT(relu6, planned(OpKind::ReLU6, "cpu:threads=1:reuse=off"));
}

// A gradient a kernel does not compute is written as zeros, never left as it was: in the shared
// gradient arena an unwritten buffer would hold other gradients (another batch size's plan
// writes the same arena). MSE's target (an input whose gradient is asked for) has a zero
// gradient, as with reuse=off, at batch 4, then 3, then 4 again.
TEST(CpuBackend, AGradientAKernelDoesNotComputeIsZero) {
  const Graph g = with_loss(zoo::build("mlp:16-32-8"), LossKind::MSE);
  ParameterSet params = ParameterSet::initialize(g, 7);
  backend::CompileOptions options;
  options.input_gradients = {g.inputs().back()};  // the target
  auto exe = backend::compile(backend::parse_backend_spec("cpu:threads=1"), g, params, options);
  const std::vector<Tensor> seed = loss_seed(g);
  for (std::int64_t rows : {4, 3, 4}) {
    const auto step = static_cast<std::uint64_t>(40 + rows);
    exe->forward(
        std::vector<Tensor>{random_tensor({rows, 16}, step), random_tensor({rows, 8}, step + 9)},
        backend::Mode::Train);
    exe->backward(seed);
    const Tensor& target_grad = exe->input_gradient(1);
    float largest = 0.0f;
    for (std::int64_t i = 0; i < target_grad.numel(); ++i)
      largest = std::max(largest, std::abs(target_grad.f32()[i]));
    EXPECT_EQ(largest, 0.0f) << rows;
  }
}

// train's memory check refuses a run whose estimate exceeds --max-memory, so the estimate must
// not exceed what a training plan holds: on four zoo models and a ReLU6 network, after a
// training step (counting ReLUs' outputs over the inputs they write in place, the first two
// would exceed it).
TEST(CpuBackend, TheTrainingMemoryEstimateIsALowerBound) {
  struct Case {
    std::string model;
    Shape input;
  };
  for (const Case& c :
       {Case{"mnist_cnn", {64, 1, 28, 28}}, Case{"mobilenet_v1:0.25", {8, 3, 128, 128}},
        Case{"resnet18", {8, 3, 128, 128}}, Case{"alexnet", {4, 1, 64, 64}},
        Case{"relu6 blocks", {16, 3, 32, 32}}}) {
    SCOPED_TRACE(c.model);
    zoo::ModelOptions input;
    input.input = Shape(c.input.begin() + 1, c.input.end());
    input.classes = 10;
    const Graph g = with_loss(
        c.model == "relu6 blocks" ? separable_blocks(OpKind::ReLU6) : zoo::build(c.model, input),
        LossKind::CrossEntropy);
    ParameterSet params = ParameterSet::initialize(g, 4);
    auto exe = backend::compile(backend::parse_backend_spec("cpu:threads=2"), g, params);
    const std::vector<Tensor> seed = loss_seed(g);
    exe->forward(std::vector<Tensor>{random_tensor(c.input, 5), labels(c.input[0], 10, 5)},
                 backend::Mode::Train);
    exe->backward(seed);
    EXPECT_LE(backend::training_memory_bytes(g, c.input[0], 0), *exe->planned_bytes());
  }
}

// A training executable's plans (one per batch size: a smaller last batch, an evaluation's)
// never run at once, so they share their arenas: a plan for 3 rows beside the one for 4 adds
// less than a fifth of it, where a plan of its own would add three quarters. And the plan for 4,
// run again after the plan for 3 wrote over the shared memory, computes what a fresh executable
// computes.
TEST(CpuBackend, TrainingPlansOfAnExecutableShareTheirArenas) {
  zoo::ModelOptions small;
  small.input = Shape{3, 64, 64};
  small.classes = 10;
  const Graph g = with_loss(zoo::build("mobilenet_v1:0.25", small), LossKind::CrossEntropy);
  ParameterSet params = ParameterSet::initialize(g, 6);
  ParameterSet fresh_params = ParameterSet::initialize(g, 6);
  auto exe = backend::compile(backend::parse_backend_spec("cpu:threads=2"), g, params);
  auto fresh = backend::compile(backend::parse_backend_spec("cpu:threads=2"), g, fresh_params);
  const std::vector<Tensor> seed = loss_seed(g);
  const std::vector<Tensor> four = {random_tensor({4, 3, 64, 64}, 31), labels(4, 10, 31)};
  const std::vector<Tensor> three = {random_tensor({3, 3, 64, 64}, 32), labels(3, 10, 32)};
  exe->forward(four, backend::Mode::Train);
  exe->backward(seed);
  const std::int64_t one_plan = *exe->planned_bytes();
  exe->forward(three, backend::Mode::Eval);
  exe->forward(three, backend::Mode::Train);
  exe->backward(seed);
  EXPECT_LT(*exe->planned_bytes() - one_plan, one_plan / 5);
  exe->forward(four, backend::Mode::Train);
  exe->backward(seed);
  fresh->forward(four, backend::Mode::Train);
  fresh->backward(seed);
  EXPECT_EQ(relative_difference(exe->output(1), fresh->output(1)), 0.0);
  for (ValueId id : g.parameters())
    EXPECT_EQ(relative_difference(exe->gradients().at(id), fresh->gradients().at(id)), 0.0)
        << g.value(id).name;
}

// The plans of one inference executable share the parameters' layouts, their arena and their
// scratchpad (shared_plan_memory.hpp): at batch 1 on two threads the thread choice keeps a
// one-thread plan beside the two-thread one, and that second plan adds far less than a copy of
// the convolutions' weights (which it would hold in oneDNN's blocked layouts otherwise); the
// same buffer comes back for the same parameter and layout, another for another.
TEST(CpuBackend, PlansOfAnExecutableShareTheirWeightLayouts) {
  zoo::ModelOptions small;
  small.input = Shape{3, 64, 64};
  const Graph g = zoo::build("resnet18", small);
  ParameterSet params = ParameterSet::initialize(g, 5);
  std::int64_t conv_weight_bytes = 0;
  for (const Node& n : g.nodes())
    if (n.kind == OpKind::Conv2d) conv_weight_bytes += params.at(n.inputs.at(1)).numel() * 4;
  const Tensor x = random_tensor({1, 3, 64, 64}, 2);
  auto two_plans =
      backend::compile_for_inference(backend::parse_backend_spec("cpu:threads=2"), g, params);
  auto one_plan = backend::compile_for_inference(
      backend::parse_backend_spec("cpu:threads=2:adapt=off"), g, params);
  for (int call = 0; call < 3; ++call) {
    two_plans->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
    one_plan->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
  }
  EXPECT_EQ(relative_difference(two_plans->output(0), one_plan->output(0)), 0.0);
  const std::int64_t second = *two_plans->planned_bytes() - *one_plan->planned_bytes();
  EXPECT_GT(second, 0);  // its own input, at least
  EXPECT_LT(second, conv_weight_bytes / 2);

  backend::cpu::SharedPlanMemory layouts;
  const Tensor w = random_tensor({16, 8, 3, 3}, 3), v = random_tensor({16, 8, 3, 3}, 4);
  const dnnl::memory::desc blocked({16, 8, 3, 3}, dnnl::memory::data_type::f32,
                                   dnnl::memory::format_tag::OIhw8i8o);
  const dnnl::memory::desc plain({16, 8, 3, 3}, dnnl::memory::data_type::f32,
                                 dnnl::memory::format_tag::oihw);
  EXPECT_EQ(layouts.weights(w, blocked).get_data_handle(),
            layouts.weights(w, blocked).get_data_handle());
  EXPECT_NE(layouts.weights(w, blocked).get_data_handle(),
            layouts.weights(w, plain).get_data_handle());
  EXPECT_NE(layouts.weights(w, blocked).get_data_handle(),
            layouts.weights(v, blocked).get_data_handle());
}

TEST(CpuBackend, BadBackendStringsAreErrors) {
  EXPECT_THROW(backend::parse_backend_spec("gpu"), Error);
  Graph g = zoo::build("mnist_cnn");
  ParameterSet p = ParameterSet::initialize(g, 0);
  EXPECT_THROW(backend::compile(backend::parse_backend_spec("cpu:threads=0"), g, p), Error);
  EXPECT_THROW(backend::compile(backend::parse_backend_spec("cpu:fast=1"), g, p), Error);
}

// With two threads, a batch of an MLP is run as two parts (one plan per thread over its rows)
// whose gradients are summed and whose mean losses are weighted by their rows: the outputs and
// gradients must be the reference's for the whole batch, also when the parts are unequal.
TEST(CpuBackend, BatchSplitAcrossThreadsMatchesReference) {
  Graph g = with_loss(zoo::build("mlp:64-48-32-10", {Shape{64}, std::nullopt}),
                      LossKind::CrossEntropy);
  ParameterSet params = ParameterSet::initialize(g, 4);
  for (std::int64_t batch : {64, 97}) {
    SCOPED_TRACE(batch);
    std::vector<Tensor> inputs = {random_tensor({batch, 64}, 7), labels(batch, 10, 8)};
    for (bool train : {false, true}) {
      const auto ref = run("cpu:ref", g, params, inputs, train);
      const auto split = run("cpu:threads=2", g, params, inputs, train);
      const auto whole = run("cpu:threads=2:split=off", g, params, inputs, train);
      for (std::size_t i = 0; i < ref.outputs.size(); ++i)
        EXPECT_LT(relative_difference(split.outputs[i], ref.outputs[i]), 1e-5) << "output " << i;
      if (!train) continue;
      bool differs_from_whole = false;  // evidence that the split path ran (other sum order)
      for (ValueId id : g.parameters()) {
        EXPECT_LT(relative_difference(split.grads.at(id), ref.grads.at(id)), 1e-5)
            << "gradient of " << g.value(id).name;
        EXPECT_LT(relative_difference(whole.grads.at(id), ref.grads.at(id)), 1e-5)
            << "gradient of " << g.value(id).name;
        differs_from_whole |= relative_difference(split.grads.at(id), whole.grads.at(id)) > 0;
      }
      EXPECT_TRUE(differs_from_whole) << "cpu:threads=2 did not split the batch";
    }
  }
}

TEST(CpuBackend, BatchSplitReportsAPartsErrors) {
  Graph g = with_loss(zoo::build("mlp:16-8-4", {Shape{16}, std::nullopt}), LossKind::CrossEntropy);
  ParameterSet params = ParameterSet::initialize(g, 1);
  auto exe = backend::compile(backend::parse_backend_spec("cpu:threads=2"), g, params);
  Tensor bad = labels(80, 4, 2);
  bad.data<std::int64_t>()[70] = 9;  // in the second part: no class 9
  std::vector<Tensor> inputs = {random_tensor({80, 16}, 3), bad};
  EXPECT_THROW(exe->forward(inputs, backend::Mode::Train), Error);
  bad.data<std::int64_t>()[70] = 1;
  exe->forward(inputs, backend::Mode::Train);  // usable again after the error
  EXPECT_TRUE(std::isfinite(exe->output(1).f32()[0]));
}

TEST(CpuBackend, SplitOptionMustBeOnOrOff) {
  Graph g = zoo::build("mlp:16-8-4", {Shape{16}, std::nullopt});
  ParameterSet p = ParameterSet::initialize(g, 0);
  EXPECT_THROW(backend::compile(backend::parse_backend_spec("cpu:split=maybe"), g, p), Error);
  EXPECT_EQ(backend::compile(backend::parse_backend_spec("cpu:threads=2:split=off"), g, p)->name(),
            "cpu:threads=2:split=off");
}

// Evaluation forwards move between two threads and one (thread_choice.hpp): whichever ran,
// every call's output is the reference kernels' (the choice is timing, never arithmetic).
TEST(CpuBackend, EvaluationOutputsDoNotDependOnTheThreadChoice) {
  const Graph g = zoo::build("mnist_cnn");
  ParameterSet params = ParameterSet::initialize(g, 3);
  Rng rng(4);
  Tensor x({1, 1, 28, 28});
  for (float& v : x.span<float>()) v = rng.uniform(0.0f, 1.0f);
  auto ref = backend::compile(backend::parse_backend_spec("cpu:ref"), g, params);
  ref->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
  const Tensor want = ref->output(0).clone();
  backend::CompileOptions options;
  options.inference = true;  // as compile_for_inference compiles: thread choice on
  auto exe = backend::compile(backend::parse_backend_spec("cpu:threads=2"), g, params, options);
  for (int call = 0; call < 120; ++call) {  // past the first probes of one thread
    exe->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
    for (std::int64_t i = 0; i < want.numel(); ++i)
      ASSERT_NEAR(exe->output(0).f32()[i], want.f32()[i], 1e-4f) << "call " << call;
  }
  EXPECT_THROW(backend::compile(backend::parse_backend_spec("cpu:adapt=maybe"), g, params), Error);
}

// Inference executables run large dense 3x3 convolutions as Winograd ones (cpu:winograd=on, the
// default): a residual block of two 64-channel convolutions at 16x16, batch 2 (19 M
// multiply-adds each), ending in a global average pool (which takes the Winograd kernel's
// blocked layout). Its outputs move off the direct convolution's (the Winograd kernel ran)
// and stay within 1e-4 of the reference kernels' (F(4x4,3x3)'s transforms round more than a
// direct sum of 576 products, whose own error is ~1e-6).
TEST(CpuBackend, WinogradConvolutionsMatchTheReference) {
  GraphBuilder b("residual");
  const ValueId x = b.input("x", {64, 16, 16});
  const ValueId h = b.relu(b.conv2d(x, 64, 3, 1, 1, 1, true, "conv_a"));
  const ValueId y = b.relu(b.add(b.conv2d(h, 64, 3, 1, 1, 1, true, "conv_b"), x));
  b.output(y);
  b.output(b.global_avgpool(y));
  const Graph g = b.finish();
  ParameterSet params = ParameterSet::initialize(g, 9);
  const Tensor input = random_tensor({2, 64, 16, 16}, 10);
  std::vector<std::vector<Tensor>> out;
  for (const char* spec : {"cpu:ref", "cpu", "cpu:winograd=off"}) {
    auto exe = backend::compile_for_inference(backend::parse_backend_spec(spec), g, params);
    exe->forward(std::span<const Tensor>(&input, 1), backend::Mode::Eval);
    out.push_back({exe->output(0).clone(), exe->output(1).clone()});
  }
  for (std::size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(fmt::format("output {}", i));
    EXPECT_LT(relative_difference(out[1][i], out[0][i]), 1e-4) << "winograd vs reference";
    EXPECT_LT(relative_difference(out[2][i], out[0][i]), 1e-5) << "direct vs reference";
  }
  EXPECT_GT(relative_difference(out[1][0], out[2][0]), 0.0) << "cpu gave the direct outputs";
  EXPECT_THROW(backend::compile(backend::parse_backend_spec("cpu:winograd=yes"), g, params), Error);
}

// A value two kernels read in the same other layout is converted once: a convolution's output
// (channels-last) read by two Flattens (which view a plain tensor), in evaluation and in
// training (the shared conversion's gradient is both readers' sum: the gradients match the
// reference kernels').
TEST(CpuBackend, ReadersOfOneLayoutShareOneConversion) {
  GraphBuilder b("two_readers");
  const ValueId x = b.input("x", {8, 6, 6});
  const ValueId r = b.relu(b.conv2d(x, 16, 3, 1, 1, 1, true, "conv"), "r");
  b.output(b.add(b.linear(b.flatten(r, "flat_a"), 5, "fc_a"),
                 b.linear(b.flatten(r, "flat_b"), 5, "fc_b"), "sum"));
  const Graph g = b.finish();
  ParameterSet params = ParameterSet::initialize(g, 3), grads = ParameterSet::initialize(g, 4);
  backend::cpu::Plan plan(g, params, grads, 2, backend::cpu::PlanOptions{});
  const std::vector<ValueId> converted = plan.converted_values();
  EXPECT_EQ(std::count(converted.begin(), converted.end(), r), 1)
      << "r is converted once for both Flattens (none: oneDNN's convolution no longer writes "
         "channels-last here, and this test shows nothing)";
  expect_backends_agree(g, {8, 6, 6}, 2, 5, 1e-4);
}

// bf16 inference (CompileOptions::precision): the convolutions really run in bf16 (the outputs
// move off fp32's) and stay within bf16's rounding of them: 8 bits of mantissa, a relative
// 2^-9 per rounding, compounded over the network's depth.
TEST(CpuBackend, Bf16InferenceStaysWithinBf16RoundingOfFp32) {
  if (!backend::cpu::has_bf16())
    GTEST_SKIP() << "this CPU has no avx512_bf16 or AMX (oneDNN dispatches to "
                 << backend::cpu::dispatched_isa() << "); bf16 is refused here";
  for (const auto& [model, input] : telar::testing::kReducedPrecisionCases) {
    zoo::ModelOptions zo;
    zo.input = input;
    const Graph g = zoo::build(model, zo);
    ParameterSet params = telar::testing::live_weights(g);
    Shape shape = g.value(g.inputs()[0]).shape;
    shape[0] = 2;
    const Tensor x = random_tensor(shape, 6, 0.0f, 1.0f);
    expect_bf16_rounding_of(inference_output(g, params, x, "cpu", true, backend::Precision::BF16),
                            inference_output(g, params, x, "cpu"), model);
  }
}

TEST(CpuBackend, Bf16IsRefusedWhereItCannotRun) {
  const Graph g = zoo::build("mnist_cnn");
  ParameterSet params = ParameterSet::initialize(g, 1);
  backend::CompileOptions options;
  options.precision = backend::Precision::BF16;
  options.inference = true;
  try {
    backend::compile(backend::parse_backend_spec("cpu:ref"), g, params, options);
    FAIL() << "cpu:ref ran bf16";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cpu:ref"), std::string::npos) << e.what();
  }
  EXPECT_THROW(backend::parse_precision("fp16", "--precision"), Error);
}
