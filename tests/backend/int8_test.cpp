// int8 inference (Precision::INT8) against what its arithmetic must give: each quantized layer
// against the reference kernels run on the same quantized values (inputs rounded to their
// calibrated scale, weights to per-channel scales, the output requantized), calibration's
// ranges against ranges computed here, and whole zoo models against fp32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/backend.hpp"
#include "backend/calibration.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/inference.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "graph/builder.hpp"
#include "graph/zoo/zoo.hpp"
#include "ops/kernels.hpp"
#include "optimize/inference.hpp"
#include "reduced_precision_cases.hpp"

using namespace telar;
using namespace telar::graph;

namespace {

Tensor random_tensor(const Shape& shape, std::uint64_t seed, float lo, float hi) {
  Tensor t(shape);
  Rng rng(seed);
  for (auto& v : t.span<float>()) v = rng.uniform(lo, hi);
  return t;
}

// x rounded to the nearest multiple of `scale` within the integer range [lo, hi].
float quantized(float x, float scale, float lo, float hi) {
  return std::clamp(std::nearbyint(x / scale), lo, hi) * scale;
}

void quantize_activation(Tensor& t, const backend::Int8Encoding& e) {
  for (float& v : t.span<float>())
    v = quantized(v, e.scale, e.is_unsigned ? 0.0f : -128.0f, e.is_unsigned ? 255.0f : 127.0f);
}

// Per-output-channel symmetric weights, as the int8 kernels quantize them.
Tensor quantize_weights(const Tensor& w) {
  Tensor q = w.clone();
  const std::int64_t channels = w.dim(0), per = w.numel() / channels;
  for (std::int64_t c = 0; c < channels; ++c) {
    float m = 0.0f;
    for (std::int64_t i = 0; i < per; ++i) m = std::max(m, std::fabs(w.f32()[c * per + i]));
    for (std::int64_t i = 0; i < per; ++i)
      q.f32()[c * per + i] = quantized(w.f32()[c * per + i], m / 127.0f, -127.0f, 127.0f);
  }
  return q;
}

std::shared_ptr<backend::QuantizationTable> table_of(
    std::initializer_list<std::pair<std::string, backend::ValueRange>> ranges) {
  auto t = std::make_shared<backend::QuantizationTable>();
  for (const auto& [name, range] : ranges) t->ranges[name] = range;
  return t;
}

Tensor run(const Graph& g, ParameterSet& params, const Tensor& x, backend::Precision precision,
           std::shared_ptr<const backend::QuantizationTable> table = nullptr) {
  backend::CompileOptions options;
  options.precision = precision;
  options.quantization = std::move(table);
  auto exe =
      backend::compile_for_inference(backend::parse_backend_spec("cpu"), g, params, true, options);
  exe->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
  return exe->output(0).clone();
}

// The name the inference passes give the graph's output (a fused activation's).
std::string inference_output_name(const Graph& g, const ParameterSet& params) {
  const auto compiled = optimize::optimize_for_inference(g, params);
  return compiled.graph.value(compiled.graph.outputs()[0]).name;
}

#define SKIP_WITHOUT_INT8()                                                                       \
  if (!backend::cpu::has_int8())                                                                  \
  GTEST_SKIP() << "this CPU has no VNNI (oneDNN dispatches to " << backend::cpu::dispatched_isa() \
               << "); int8 is refused here"

// Every output within one step of its requantized reference (the two accumulate in different
// orders, so a value on a rounding boundary may go either way), nearly all of them exact.
void expect_within_one_step(const Tensor& got, const Tensor& want, float step) {
  ASSERT_EQ(got.numel(), want.numel());
  std::int64_t exact = 0;
  for (std::int64_t i = 0; i < got.numel(); ++i) {
    const float d = std::fabs(got.f32()[i] - want.f32()[i]);
    ASSERT_LE(d, step * 1.001f) << "element " << i << ": " << got.f32()[i] << " vs "
                                << want.f32()[i];
    if (d <= step * 1e-3f) ++exact;
  }
  EXPECT_GE(static_cast<double>(exact), 0.97 * static_cast<double>(got.numel()));
}

}  // namespace

// A convolution with bias and ReLU: u8 input, u8 output whose calibrated range is below the
// largest output (so some outputs saturate at 255 steps).
TEST(Int8, ConvolutionEqualsTheReferenceOnQuantizedValues) {
  SKIP_WITHOUT_INT8();
  GraphBuilder b("conv");
  const ValueId x = b.input("x", {8, 9, 9});
  b.output(b.relu(b.conv2d(x, 16, 3, 1, 1)));
  const Graph g = b.finish();
  ParameterSet params = ParameterSet::initialize(g, 3);
  const Tensor input = random_tensor({2, 8, 9, 9}, 4, 0.0f, 1.0f);
  const Tensor fp32 = run(g, params, input, backend::Precision::FP32);
  const float top = *std::max_element(fp32.f32(), fp32.f32() + fp32.numel());
  const auto table =
      table_of({{"x", {0.0f, 1.0f}}, {inference_output_name(g, params), {0.0f, 0.8f * top}}});
  const Tensor got = run(g, params, input, backend::Precision::INT8, table);

  Tensor xq = input.clone();
  quantize_activation(xq, backend::int8_encoding({0.0f, 1.0f}));
  const Node& conv = g.nodes()[0];
  Tensor want(fp32.shape());
  ops::conv2d_forward(conv.attr<Conv2dAttrs>(), xq, quantize_weights(params.at(conv.inputs[1])),
                      &params.at(conv.inputs[2]), want);
  for (float& v : want.span<float>()) v = std::max(v, 0.0f);
  const auto out = backend::int8_encoding({0.0f, 0.8f * top});
  quantize_activation(want, out);
  expect_within_one_step(got, want, out.scale);
  EXPECT_GT(*std::max_element(fp32.f32(), fp32.f32() + fp32.numel()),
            *std::max_element(got.f32(), got.f32() + got.numel()))
      << "no output saturated: the test does not exercise the clamp";
}

// A residual sum fused into a convolution with a ReLU: the summand (another convolution's
// output, negative too) is added in its own encoding, not clipped to the ReLU'd output's u8
// range first; equal to the reference on quantized values within one output step.
TEST(Int8, AResidualSumAddsTheSummandInItsOwnEncoding) {
  SKIP_WITHOUT_INT8();
  GraphBuilder b("residual");
  const ValueId x = b.input("x", {8, 9, 9});
  const ValueId s = b.conv2d(x, 16, 3, 1, 1, 1, true, "s");
  const ValueId c = b.conv2d(x, 16, 3, 1, 1, 1, true, "c");
  b.output(b.relu(b.add(c, s)));
  const Graph g = b.finish();
  ParameterSet params = ParameterSet::initialize(g, 13);
  const Tensor input = random_tensor({2, 8, 9, 9}, 14, 0.0f, 1.0f);
  const auto table = std::make_shared<backend::QuantizationTable>(
      backend::calibrate(g, params, std::vector<Tensor>{input}, {}));
  const auto compiled = optimize::optimize_for_inference(g, params);
  int fused = 0;
  for (const Node& n : compiled.graph.nodes())
    if (n.kind == OpKind::Conv2d && n.attr<Conv2dAttrs>().post.sum) ++fused;
  ASSERT_EQ(fused, 1) << "the sum was not fused: the test would not exercise it";
  const std::string out_name = compiled.graph.value(compiled.graph.outputs()[0]).name;
  const auto s_enc = backend::int8_encoding(table->ranges.at("s.out"));
  ASSERT_FALSE(s_enc.is_unsigned) << "the summand has no negative values";
  const Tensor got = run(g, params, input, backend::Precision::INT8, table);

  Tensor xq = input.clone();
  quantize_activation(xq, backend::int8_encoding(table->ranges.at("x")));
  const auto conv_of = [&](const char* name) {
    const Node& n = *g.find_node(name);
    Tensor y(got.shape());
    ops::conv2d_forward(n.attr<Conv2dAttrs>(), xq, quantize_weights(params.at(n.inputs[1])),
                        &params.at(n.inputs[2]), y);
    return y;
  };
  Tensor summand = conv_of("s");
  quantize_activation(summand, s_enc);
  Tensor want = conv_of("c");
  for (std::int64_t i = 0; i < want.numel(); ++i)
    want.f32()[i] = std::max(want.f32()[i] + summand.f32()[i], 0.0f);
  const auto out = backend::int8_encoding(table->ranges.at(out_name));
  quantize_activation(want, out);
  expect_within_one_step(got, want, out.scale);
}

// A convolution kept in fp32 (QuantizationTable::excluded, telar quantize --exclude) computes
// fp32's output exactly, its input and output encodings notwithstanding.
TEST(Int8, AnExcludedConvolutionRunsInFp32) {
  SKIP_WITHOUT_INT8();
  GraphBuilder b("conv");
  const ValueId x = b.input("x", {8, 9, 9});
  b.output(b.relu(b.conv2d(x, 16, 3, 1, 1, 1, true, "conv")));
  const Graph g = b.finish();
  ParameterSet params = ParameterSet::initialize(g, 3);
  const Tensor input = random_tensor({2, 8, 9, 9}, 4, 0.0f, 1.0f);
  const Tensor fp32 = run(g, params, input, backend::Precision::FP32);
  auto table = table_of({{"x", {0.0f, 1.0f}}, {inference_output_name(g, params), {0.0f, 1.0f}}});
  const Tensor quantized = run(g, params, input, backend::Precision::INT8, table);
  table->excluded.insert("conv");
  const Tensor excluded = run(g, params, input, backend::Precision::INT8, table);
  double off = 0;
  for (std::int64_t i = 0; i < fp32.numel(); ++i) {
    EXPECT_EQ(excluded.f32()[i], fp32.f32()[i]) << "element " << i;
    off = std::max(off, static_cast<double>(std::fabs(quantized.f32()[i] - fp32.f32()[i])));
  }
  EXPECT_GT(off, 0.0) << "the int8 convolution gave fp32's outputs: the test shows nothing";
}

// Each layer's sensitivity is the output error with it alone in int8: for a model of one
// convolution that is the whole int8 model's error; for two, both are measured, most sensitive
// first, and an excluded layer is not.
TEST(Int8, LayerSensitivityIsTheErrorOfEachLayerAlone) {
  SKIP_WITHOUT_INT8();
  GraphBuilder b("two");
  const ValueId x = b.input("x", {8, 9, 9});
  const ValueId c1 = b.relu(b.conv2d(x, 16, 3, 1, 1, 1, true, "c1"));
  b.output(b.conv2d(c1, 4, 3, 1, 1, 1, true, "c2"));
  const Graph g = b.finish();
  ParameterSet params = ParameterSet::initialize(g, 11);
  const std::vector<Tensor> batch = {random_tensor({2, 8, 9, 9}, 12, 0.0f, 1.0f)};
  auto table =
      std::make_shared<backend::QuantizationTable>(backend::calibrate(g, params, batch, {}));
  const auto layers = backend::layer_sensitivity(g, params, *table, batch[0]);
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_GE(layers[0].error, layers[1].error);
  EXPECT_GT(layers[1].error, 0.0);
  // Each alone, by hand: the other excluded.
  const Tensor fp32 = run(g, params, batch[0], backend::Precision::FP32);
  for (const auto& l : layers) {
    auto alone = std::make_shared<backend::QuantizationTable>(*table);
    alone->excluded.insert(l.node == "c1" ? "c2" : "c1");
    const Tensor y = run(g, params, batch[0], backend::Precision::INT8, alone);
    double diff = 0, norm = 0;
    for (std::int64_t i = 0; i < y.numel(); ++i) {
      diff += std::pow(static_cast<double>(y.f32()[i]) - fp32.f32()[i], 2);
      norm += std::pow(static_cast<double>(fp32.f32()[i]), 2);
    }
    EXPECT_NEAR(l.error, std::sqrt(diff / norm), 1e-9) << l.node;
  }
  table->excluded.insert("c1");
  const auto rest = backend::layer_sensitivity(g, params, *table, batch[0]);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].node, "c2");
}

// A depthwise convolution (groups = channels) on a signed input, without activation: s8 in and
// out.
TEST(Int8, DepthwiseConvolutionOnSignedValuesEqualsTheReference) {
  SKIP_WITHOUT_INT8();
  GraphBuilder b("dw");
  const ValueId x = b.input("x", {16, 7, 7});
  b.output(b.conv2d(x, 16, 3, 2, 1, /*groups=*/16));
  const Graph g = b.finish();
  ParameterSet params = ParameterSet::initialize(g, 5);
  const Tensor input = random_tensor({3, 16, 7, 7}, 6, -1.0f, 1.0f);
  const Tensor fp32 = run(g, params, input, backend::Precision::FP32);
  float top = 0.0f;
  for (float v : fp32.span<float>()) top = std::max(top, std::fabs(v));
  const backend::ValueRange out_range{-top, top};
  const auto table =
      table_of({{"x", {-1.0f, 1.0f}}, {inference_output_name(g, params), out_range}});
  const Tensor got = run(g, params, input, backend::Precision::INT8, table);

  Tensor xq = input.clone();
  quantize_activation(xq, backend::int8_encoding({-1.0f, 1.0f}));
  const Node& conv = g.nodes()[0];
  Tensor want(fp32.shape());
  ops::conv2d_forward(conv.attr<Conv2dAttrs>(), xq, quantize_weights(params.at(conv.inputs[1])),
                      &params.at(conv.inputs[2]), want);
  const auto out = backend::int8_encoding(out_range);
  quantize_activation(want, out);
  expect_within_one_step(got, want, out.scale);
}

// Linear: a signed input quantized, an f32 output (no requantization): equal to the reference
// on the quantized values up to f32 rounding.
// [B, 64] features, and a Linear over rows ([B, 5, 64]: tokens), each row on its own.
TEST(Int8, LinearEqualsTheReferenceOnQuantizedValues) {
  SKIP_WITHOUT_INT8();
  for (const Shape& sample : {Shape{64}, Shape{5, 64}}) {
    GraphBuilder b("fc");
    const ValueId x = b.input("x", sample);
    b.output(b.linear(x, 10));
    const Graph g = b.finish();
    ParameterSet params = ParameterSet::initialize(g, 7);
    for (const std::int64_t batch : {32, 1}) {
      Shape shape = sample;
      shape.insert(shape.begin(), batch);
      const Tensor input = random_tensor(shape, 8, -2.0f, 2.0f);
      const Tensor got =
          run(g, params, input, backend::Precision::INT8, table_of({{"x", {-2.0f, 2.0f}}}));
      Tensor xq = input.clone();
      quantize_activation(xq, backend::int8_encoding({-2.0f, 2.0f}));
      const Node& fc = g.nodes()[0];
      shape.back() = 10;
      Tensor want(shape);
      ops::linear_forward(xq, quantize_weights(params.at(fc.inputs[1])), &params.at(fc.inputs[2]),
                          want);
      ASSERT_EQ(got.shape(), want.shape());
      for (std::int64_t i = 0; i < want.numel(); ++i)
        EXPECT_NEAR(got.f32()[i], want.f32()[i], 1e-4f * (1.0f + std::fabs(want.f32()[i])))
            << shape_str(shape) << " element " << i;
    }
  }
}

// Min/max calibration records each value's extremes; the percentile method the magnitude below
// which that share of the values lies.
TEST(Int8, CalibrationRecordsEachValuesRange) {
  GraphBuilder b("relu");
  const ValueId x = b.input("x", {1000});
  b.output(b.relu(x));
  const Graph g = b.finish();
  ParameterSet params = ParameterSet::initialize(g, 0);
  std::vector<Tensor> batches;
  for (int k = 0; k < 2; ++k) {  // -0.5 ... 9.4995 over the two batches, in steps of 0.0005
    Tensor t({10, 1000});
    for (std::int64_t i = 0; i < t.numel(); ++i)
      t.f32()[i] = -0.5f + 0.0005f * static_cast<float>(k * t.numel() + i);
    batches.push_back(std::move(t));
  }
  // What is not finite (a max pool's -inf padding) is no part of a range.
  Tensor odd({1, 1000});
  odd.zero();
  odd.f32()[0] = -std::numeric_limits<float>::infinity();
  odd.f32()[1] = std::numeric_limits<float>::quiet_NaN();
  batches.push_back(std::move(odd));
  backend::CalibrationOptions minmax;
  int calls = 0;
  minmax.progress = [&](int done, int total) {
    ++calls;
    EXPECT_EQ(total, 3);
    EXPECT_EQ(done, calls);
  };
  const auto table = backend::calibrate(g, params, batches, minmax);
  const std::string relu = g.value(g.outputs()[0]).name;
  ASSERT_EQ(table.ranges.count("x"), 1U);
  ASSERT_EQ(table.ranges.count(relu), 1U);
  EXPECT_FLOAT_EQ(table.ranges.at("x").min, -0.5f);
  EXPECT_NEAR(table.ranges.at("x").max, 9.4995f, 1e-4f);
  EXPECT_FLOAT_EQ(table.ranges.at(relu).min, 0.0f);
  EXPECT_NEAR(table.ranges.at(relu).max, 9.4995f, 1e-4f);

  backend::CalibrationOptions percentile;
  percentile.method = backend::CalibrationMethod::Percentile;
  percentile.percentile = 90.0;
  const auto clipped = backend::calibrate(g, params, batches, percentile);
  // 90% of the 20998 finite magnitudes (the ramp's 20000 and 998 zeros) lie below 8.4505:
  // 998 zeros and the ramp from -0.5 up to it, 17901 values; one histogram bin wide.
  const float bin = 9.4995f / 2048.0f;
  EXPECT_NEAR(clipped.ranges.at(relu).max, 8.4505f, 1.5f * bin);
  EXPECT_NEAR(clipped.ranges.at("x").max, 8.4505f, 1.5f * bin);
  EXPECT_FLOAT_EQ(clipped.ranges.at("x").min, -0.5f);  // inside the kept magnitudes
  EXPECT_THROW(backend::calibrate(g, params, {}, minmax), Error);
}

// Calibration reads every value of the graph compiled for inference as computed, also a
// residual summand that the fused convolution writes its output over: its ranges equal those
// of the same graph on the reference kernels (which write every value apart). A fused sum's
// convolution also has the range of what it computes before the sum ("<output>/primitive",
// which the ONNX export quantizes): not yet through the ReLU, so negative too.
TEST(Int8, CalibrationRangesAreThoseOfTheValuesComputed) {
  zoo::ModelOptions zo;
  zo.input = Shape{3, 32, 32};
  const Graph g = zoo::build("resnet18", zo);
  ParameterSet params = ParameterSet::initialize(g, 9);
  const std::vector<Tensor> batches = {random_tensor({2, 3, 32, 32}, 10, 0.0f, 1.0f)};
  const auto table = backend::calibrate(g, params, batches, {});

  const auto compiled = optimize::optimize_for_inference(g, params);
  Graph observed = compiled.graph;
  ParameterSet weights = compiled.params;
  int summands = 0;
  for (const Node& n : compiled.graph.nodes())
    if (n.kind == OpKind::Conv2d && n.attr<Conv2dAttrs>().post.sum) {
      ++summands;
      const std::string before = compiled.graph.value(n.outputs[0]).name + "/primitive";
      ASSERT_EQ(table.ranges.count(before), 1U) << before;
      EXPECT_LT(table.ranges.at(before).min, 0.0f) << before;
      EXPECT_GE(table.ranges.at(compiled.graph.value(n.outputs[0]).name).min, 0.0f);
    }
  ASSERT_GT(summands, 0) << "resnet18 compiled for inference has no fused residual sums";
  std::vector<ValueId> values;
  for (const Node& n : observed.nodes()) {
    values.push_back(n.outputs[0]);
    if (std::find(observed.outputs().begin(), observed.outputs().end(), n.outputs[0]) ==
        observed.outputs().end())
      observed.add_output(n.outputs[0]);
  }
  backend::CompileOptions co;
  co.inference = true;
  auto ref = backend::compile(backend::parse_backend_spec("cpu:ref"), observed, weights, co);
  ref->forward(std::span<const Tensor>(batches.data(), 1), backend::Mode::Eval);
  for (std::size_t i = 0; i < observed.outputs().size(); ++i) {
    const ValueId v = observed.outputs()[i];
    const Tensor& t = ref->output(i);
    const float lo = *std::min_element(t.f32(), t.f32() + t.numel());
    const float hi = *std::max_element(t.f32(), t.f32() + t.numel());
    const auto& r = table.ranges.at(observed.value(v).name);
    EXPECT_NEAR(r.min, lo, 1e-4f * (1.0f + std::fabs(lo))) << observed.value(v).name;
    EXPECT_NEAR(r.max, hi, 1e-4f * (1.0f + std::fabs(hi))) << observed.value(v).name;
  }
}

// Whole networks calibrated on random inputs and run on others: close to fp32 (a few percent
// of the output's magnitude: 8-bit steps compounded over the depth), but not equal to it.
TEST(Int8, ZooModelsStayCloseToFp32) {
  SKIP_WITHOUT_INT8();
  for (const auto& [model, input] : telar::testing::kReducedPrecisionCases) {
    zoo::ModelOptions zo;
    zo.input = input;
    const Graph g = zoo::build(model, zo);
    ParameterSet params = telar::testing::live_weights(g);
    Shape shape = g.value(g.inputs()[0]).shape;
    shape[0] = 4;
    std::vector<Tensor> calibration;
    for (std::uint64_t k = 0; k < 4; ++k)
      calibration.push_back(random_tensor(shape, 20 + k, 0.0f, 1.0f));
    auto table = std::make_shared<backend::QuantizationTable>(
        backend::calibrate(g, params, calibration, {}));
    const Tensor x = random_tensor(shape, 30, 0.0f, 1.0f);
    const Tensor fp32 = run(g, params, x, backend::Precision::FP32);
    const Tensor int8 = run(g, params, x, backend::Precision::INT8, table);
    const auto [diff, scale] = telar::testing::max_difference(int8, fp32);
    EXPECT_GT(diff, 1e-6 * scale) << model << ": int8 gave fp32's outputs exactly";
    EXPECT_LE(diff, 0.1 * scale) << model;
    std::cout << model << ": int8 max |diff| " << diff << " of output magnitude " << scale << "\n";
  }
}

TEST(Int8, IsRefusedWithoutCalibrationOrWhereItCannotRun) {
  const Graph g = zoo::build("mnist_cnn");
  ParameterSet params = ParameterSet::initialize(g, 1);
  backend::CompileOptions options;
  options.precision = backend::Precision::INT8;
  options.inference = true;
  for (const char* spec : {"cpu", "cpu:ref"}) {
    try {
      backend::compile(backend::parse_backend_spec(spec), g, params, options);
      FAIL() << spec << " ran int8 without calibration";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_TRUE(what.find("telar quantize") != std::string::npos ||
                  what.find("cpu:ref") != std::string::npos ||
                  what.find("VNNI") != std::string::npos)
          << what;
    }
  }
  EXPECT_EQ(backend::parse_precision("int8", "--precision"), backend::Precision::INT8);
  EXPECT_THROW(backend::parse_calibration_method("entropy", "--calibration"), Error);
}
