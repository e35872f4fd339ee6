// ONNX import: small models built here with ONNX's own protobuf classes, checked against
// hand-derived outputs, and the bad files a user meets (each one error naming what is wrong).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "backend/backend.hpp"
#include "core/error.hpp"
#include "core/npy.hpp"
#include "e2e/run_command.hpp"
#include "onnx/export.hpp"
#include "onnx/import.hpp"
#include "train/test_support.hpp"

namespace telar::onnx {
namespace {

namespace fs = std::filesystem;
namespace proto = ::onnx;

// A file in this test process's temporary directory (removed at exit).
fs::path temp_file(const std::string& name) {
  static const train::testing::TempDir dir("onnx");
  return dir / name;
}

// A model: input "x" of `dims` (0: dynamic), one Gemm-free chain added by the test.
proto::ModelProto base_model(std::vector<std::int64_t> dims, int opset = 13) {
  proto::ModelProto m;
  m.set_ir_version(7);
  m.set_producer_name("telar-test");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("test");
  auto* in = g->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(proto::TensorProto::FLOAT);
  for (auto d : dims) {
    auto* dim = tt->mutable_shape()->add_dim();
    if (d > 0)
      dim->set_dim_value(d);
    else
      dim->set_dim_param("n");
  }
  return m;
}

void add_initializer(proto::ModelProto& m, const std::string& name, std::vector<std::int64_t> dims,
                     const std::vector<float>& values) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(proto::TensorProto::FLOAT);
  for (auto d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

proto::NodeProto* add_node(proto::ModelProto& m, const std::string& op,
                           std::vector<std::string> inputs, const std::string& output) {
  auto* n = m.mutable_graph()->add_node();
  n->set_name(op + "_" + output);
  n->set_op_type(op);
  for (auto& i : inputs) n->add_input(i);
  n->add_output(output);
  return n;
}

void add_output(proto::ModelProto& m, const std::string& name) {
  m.mutable_graph()->add_output()->set_name(name);
}

fs::path save(const proto::ModelProto& m, const std::string& name) {
  const fs::path p = temp_file(name);
  std::ofstream out(p, std::ios::binary);
  m.SerializeToOstream(&out);
  return p;
}

// y = relu(x W^T + b) with transB=1, then alpha/beta scaling, checked by hand.
TEST(OnnxImport, GemmWithTransposeAlphaAndBetaMatchesHandComputedValues) {
  auto m = base_model({1, 2});
  add_initializer(m, "W", {3, 2}, {1, 2, 3, 4, -5, 6});
  add_initializer(m, "b", {3}, {0.5f, -100.0f, 1.0f});
  auto* gemm = add_node(m, "Gemm", {"x", "W", "b"}, "h");
  auto* a = gemm->add_attribute();
  a->set_name("transB");
  a->set_type(proto::AttributeProto::INT);
  a->set_i(1);
  auto* alpha = gemm->add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(proto::AttributeProto::FLOAT);
  alpha->set_f(2.0f);
  add_node(m, "Relu", {"h"}, "y");
  add_output(m, "y");
  ImportedModel model = import_model(save(m, "gemm.onnx"));
  EXPECT_EQ(model.opset, 13);
  EXPECT_EQ(model.producer, "telar-test");
  auto exe = backend::compile(backend::parse_backend_spec("cpu:ref"), model.graph, model.weights);
  const Tensor x = Tensor::from(std::vector<float>{1.0f, -1.0f}, {1, 2});
  exe->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
  const Tensor& y = exe->output(0);
  // rows of W: (1,2)->-1, (3,4)->-1, (-5,6)->-11; times alpha 2, plus beta*b.
  EXPECT_FLOAT_EQ(y.f32()[0], 0.0f);  // relu(-2 + 0.5)
  EXPECT_FLOAT_EQ(y.f32()[1], 0.0f);  // relu(-2 - 100)
  EXPECT_FLOAT_EQ(y.f32()[2], 0.0f);  // relu(-22 + 1)
  const Tensor x2 = Tensor::from(std::vector<float>{1.0f, 1.0f}, {1, 2});
  exe->forward(std::span<const Tensor>(&x2, 1), backend::Mode::Eval);
  EXPECT_FLOAT_EQ(exe->output(0).f32()[0], 6.5f);  // 2 * 3 + 0.5
  EXPECT_FLOAT_EQ(exe->output(0).f32()[1], 0.0f);  // 2 * 7 - 100
  EXPECT_FLOAT_EQ(exe->output(0).f32()[2], 3.0f);  // 2 * 1 + 1
}

// A Flatten written as Shape -> Gather -> Unsqueeze -> Concat -> Reshape (x.view(x.size(0), -1))
// folds to telar's Flatten; Clip(0, 6) with its bounds as inputs (opset 11+) is ReLU6.
TEST(OnnxImport, FoldsTheShapeSubgraphOfAViewAndReadsClipBoundsFromInputs) {
  auto m = base_model({1, 2, 2, 2});
  add_node(m, "Shape", {"x"}, "s");
  auto* zero = add_node(m, "Constant", {}, "zero");
  auto* v = zero->add_attribute();
  v->set_name("value");
  v->set_type(proto::AttributeProto::TENSOR);
  v->mutable_t()->set_data_type(proto::TensorProto::INT64);
  v->mutable_t()->add_int64_data(0);
  add_node(m, "Gather", {"s", "zero"}, "n");
  auto* axes = add_node(m, "Constant", {}, "axes");
  auto* av = axes->add_attribute();
  av->set_name("value_ints");
  av->set_type(proto::AttributeProto::INTS);
  av->add_ints(0);
  add_node(m, "Unsqueeze", {"n", "axes"}, "n1");
  auto* minus = add_node(m, "Constant", {}, "minus1");
  auto* mv = minus->add_attribute();
  mv->set_name("value_ints");
  mv->set_type(proto::AttributeProto::INTS);
  mv->add_ints(-1);
  auto* cat = add_node(m, "Concat", {"n1", "minus1"}, "target");
  auto* ax = cat->add_attribute();
  ax->set_name("axis");
  ax->set_type(proto::AttributeProto::INT);
  ax->set_i(0);
  add_node(m, "Reshape", {"x", "target"}, "flat");
  add_initializer(m, "lo", {}, {0.0f});
  add_initializer(m, "hi", {}, {6.0f});
  add_node(m, "Clip", {"flat", "lo", "hi"}, "y");
  add_output(m, "y");
  ImportedModel model = import_model(save(m, "view.onnx"));
  ASSERT_EQ(model.graph.nodes().size(), 2u);
  EXPECT_EQ(model.graph.nodes()[0].kind, graph::OpKind::Flatten);
  EXPECT_EQ(model.graph.nodes()[1].kind, graph::OpKind::ReLU6);
  auto exe = backend::compile(backend::parse_backend_spec("cpu:ref"), model.graph, model.weights);
  const Tensor x = Tensor::from(std::vector<float>{-1, 0, 1, 2, 5, 6, 7, 100}, {1, 2, 2, 2});
  exe->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
  const std::vector<float> expected{0, 0, 1, 2, 5, 6, 6, 6};
  for (int i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(exe->output(0).f32()[i], expected[i]) << i;
}

TEST(OnnxImport, AnUnknownOpNamesTheNodeAndItsOpType) {
  auto m = base_model({1, 4});
  add_node(m, "Relu", {"x"}, "h");
  add_node(m, "Hardmax", {"h"}, "y");
  add_output(m, "y");
  train::testing::expect_error([&] { import_model(save(m, "unknown.onnx")); },
                               {"node 'Hardmax_y' (Hardmax)", "not supported"});
}

TEST(OnnxImport, AnUnsupportedAttributeIsNamed) {
  auto m = base_model({1, 4});
  auto* n = add_node(m, "Softmax", {"x"}, "y");
  auto* a = n->add_attribute();
  a->set_name("temperature");
  a->set_type(proto::AttributeProto::FLOAT);
  a->set_f(2.0f);
  add_output(m, "y");
  train::testing::expect_error([&] { import_model(save(m, "attr.onnx")); },
                               {"attribute 'temperature'"});
}

void set_ints(proto::NodeProto* n, const std::string& name, std::vector<std::int64_t> values) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(proto::AttributeProto::INTS);
  for (auto v : values) a->add_ints(v);
}

void set_int(proto::NodeProto* n, const std::string& name, std::int64_t value) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(proto::AttributeProto::INT);
  a->set_i(value);
}

void set_float(proto::NodeProto* n, const std::string& name, float value) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(proto::AttributeProto::FLOAT);
  a->set_f(value);
}

void set_string(proto::NodeProto* n, const std::string& name, const std::string& value) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(proto::AttributeProto::STRING);
  a->set_s(value);
}

void add_int_initializer(proto::ModelProto& m, const std::string& name,
                         std::vector<std::int64_t> values) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(proto::TensorProto::INT64);
  t->add_dims(static_cast<std::int64_t>(values.size()));
  for (auto v : values) t->add_int64_data(v);
}

// Runs an imported model on the reference kernels.
Tensor run(ImportedModel model, const Tensor& x) {
  auto exe = backend::compile(backend::parse_backend_spec("cpu:ref"), model.graph, model.weights);
  exe->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
  return exe->output(0);
}

void expect_floats(const Tensor& t, const std::vector<float>& expected) {
  ASSERT_EQ(t.numel(), static_cast<std::int64_t>(expected.size()));
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_FLOAT_EQ(t.f32()[i], expected[i]) << "element " << i;
}

// MaxPool with ceil_mode and pads at one end only: both become a -inf Pad in front of it.
TEST(OnnxImport, MaxPoolWithCeilModeAndOneSidedPadsMatchesHandValues) {
  auto m = base_model({1, 1, 4, 4});
  auto* n = add_node(m, "MaxPool", {"x"}, "y");
  set_ints(n, "kernel_shape", {3, 3});
  set_ints(n, "strides", {2, 2});
  set_int(n, "ceil_mode", 1);
  add_output(m, "y");
  ImportedModel model = import_model(save(m, "ceil.onnx"));
  // x = 0..15 negated: windows rows/cols {0..2} and {2..3} (the second cut by the edge).
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = -static_cast<float>(i);
  const Tensor x = Tensor::from(v, {1, 1, 4, 4});
  // max of each window is its top-left element: 0, -2, -8, -10.
  expect_floats(run(model, x), {0, -2, -8, -10});

  auto m2 = base_model({1, 1, 3, 3});
  auto* p = add_node(m2, "MaxPool", {"x"}, "y");
  set_ints(p, "kernel_shape", {2, 2});
  set_ints(p, "strides", {2, 2});
  set_ints(p, "pads", {0, 0, 1, 1});
  add_output(m2, "y");
  const Tensor x2 = Tensor::from(std::vector<float>{-1, -2, -3, -4, -5, -6, -7, -8, -9}, {1, 1, 3, 3});
  // Windows {0,1}x{0,1}, {0,1}x{2}, {2}x{0,1}, {2}x{2}: the padding never wins.
  expect_floats(run(import_model(save(m2, "pads.onnx")), x2), {-1, -3, -7, -9});
}

TEST(OnnxImport, AveragePoolOverOneSidedPadsWithoutThemInTheDivisorIsRefused) {
  auto m = base_model({1, 1, 4, 4});
  auto* n = add_node(m, "AveragePool", {"x"}, "y");
  set_ints(n, "kernel_shape", {2, 2});
  set_ints(n, "pads", {0, 0, 1, 1});
  add_output(m, "y");
  train::testing::expect_error([&] { import_model(save(m, "avgpads.onnx")); },
                               {"(AveragePool)", "pads [0, 0, 1, 1]", "count_include_pad"});
}

// ShuffleNet's channel shuffle and split, then a squeeze-and-excitation style scale by a
// constant [C, 1, 1] and a HardSigmoid: every step checked by hand on 4 channels of 1x1.
TEST(OnnxImport, ChannelShuffleSplitAndBroadcastScaleMatchHandValues) {
  auto m = base_model({1, 4, 1, 1});
  add_int_initializer(m, "grouped", {0, 2, 2, 1, 1});  // 0: copy the batch
  add_node(m, "Reshape", {"x", "grouped"}, "g");
  auto* t = add_node(m, "Transpose", {"g"}, "gt");
  set_ints(t, "perm", {0, 2, 1, 3, 4});
  add_int_initializer(m, "back", {-1, 4, 1, 1});
  add_node(m, "Reshape", {"gt", "back"}, "shuffled");
  add_int_initializer(m, "halves", {2, 2});
  auto* split = m.mutable_graph()->add_node();
  split->set_name("split");
  split->set_op_type("Split");
  split->add_input("shuffled");
  split->add_input("halves");
  split->add_output("first");
  split->add_output("second");
  set_int(split, "axis", 1);
  add_initializer(m, "scale", {2, 1, 1}, {6.0f, -6.0f});
  add_node(m, "Mul", {"second", "scale"}, "scaled");
  add_node(m, "HardSigmoid", {"scaled"}, "hs");
  add_node(m, "Sub", {"hs", "first"}, "y");
  add_output(m, "y");
  ImportedModel model = import_model(save(m, "shuffle.onnx"));
  const Tensor x = Tensor::from(std::vector<float>{0.5f, 1, 2, 3}, {1, 4, 1, 1});
  // shuffle of channels (a, b | c, d) -> (a, c, b, d) = (0.5, 2, 1, 3); first (0.5, 2), second
  // (1, 3); scaled (6, -18); HardSigmoid(0.2 x + 0.5) = (1, 0); minus first: (0.5, -2).
  expect_floats(run(model, x), {0.5f, -2.0f});
  // The shuffle keeps working at another batch size (the Reshape's 0 and -1 are the batch).
  const Tensor x2 = Tensor::from(std::vector<float>{0.5f, 1, 2, 3, 0, 0, 0, 0}, {2, 4, 1, 1});
  expect_floats(run(model, x2), {0.5f, -2.0f, 0.5f, 0.5f});
}

TEST(OnnxImport, PadBeforeAveragePoolMatchesHandValues) {
  auto m = base_model({1, 1, 2, 2});
  add_int_initializer(m, "pads", {0, 0, 1, 0, 0, 0, 0, 1});  // top 1, right 1
  add_node(m, "Pad", {"x", "pads"}, "p");
  auto* n = add_node(m, "AveragePool", {"p"}, "y");
  set_ints(n, "kernel_shape", {3, 3});
  add_output(m, "y");
  const Tensor x = Tensor::from(std::vector<float>{1, 2, 3, 4}, {1, 1, 2, 2});
  expect_floats(run(import_model(save(m, "pad.onnx")), x), {10.0f / 9});
}

// Resize of x = [[1, 2], [3, 4]]. Linear with half pixels, by scales of 2: along each axis the
// outputs read the inputs at -0.25 (clamped to 0), 0.25, 0.75 and 1.25 (the last pixel beyond
// 1), so a row [a, b] becomes [a, a + (b - a) / 4, a + 3 (b - a) / 4, b] and the rows mix alike.
// Linear with aligned corners to sizes 3x3: the inputs at 0, 0.5 and 1. Nearest with asymmetric
// coordinates rounded down, to sizes 4x3: rows floor(o / 2) = 0, 0, 1, 1 and columns
// floor(o * 2 / 3) = 0, 0, 1.
TEST(OnnxImport, ResizeMatchesHandValues) {
  const Tensor x = Tensor::from(std::vector<float>{1, 2, 3, 4}, {1, 1, 2, 2});
  auto resized = [&](const std::string& mode, const std::string& coordinates,
                     const std::vector<float>& scales, const std::vector<std::int64_t>& sizes) {
    auto m = base_model({0, 1, 2, 2});
    std::vector<std::string> inputs{"x", ""};
    if (!scales.empty()) {
      add_initializer(m, "scales", {4}, scales);
      inputs.push_back("scales");
    } else {
      add_int_initializer(m, "sizes", sizes);
      inputs.insert(inputs.end(), {"", "sizes"});
    }
    auto* n = add_node(m, "Resize", inputs, "y");
    set_string(n, "mode", mode);
    set_string(n, "coordinate_transformation_mode", coordinates);
    set_string(n, "nearest_mode", "floor");
    add_output(m, "y");
    return run(import_model(save(m, "resize.onnx")), x);
  };
  expect_floats(resized("linear", "half_pixel", {1, 1, 2, 2}, {}), {1.0f, 1.25f, 1.75f, 2.0f,  //
                                                                    1.5f, 1.75f, 2.25f, 2.5f,  //
                                                                    2.5f, 2.75f, 3.25f, 3.5f,  //
                                                                    3.0f, 3.25f, 3.75f, 4.0f});
  expect_floats(resized("linear", "align_corners", {}, {1, 1, 3, 3}),
                {1.0f, 1.5f, 2.0f, 2.0f, 2.5f, 3.0f, 3.0f, 3.5f, 4.0f});
  expect_floats(resized("nearest", "asymmetric", {}, {1, 1, 4, 3}),
                {1, 1, 2, 1, 1, 2, 3, 3, 4, 3, 3, 4});
  // Opset 18's `axes` naming the spatial axes alone: sizes [3, 3] with aligned corners, as above.
  auto m = base_model({0, 1, 2, 2}, 18);
  add_int_initializer(m, "sizes", {3, 3});
  auto* n = add_node(m, "Resize", {"x", "", "", "sizes"}, "y");
  set_string(n, "mode", "linear");
  set_string(n, "coordinate_transformation_mode", "align_corners");
  set_ints(n, "axes", {-2, -1});
  add_output(m, "y");
  expect_floats(run(import_model(save(m, "resize_axes.onnx")), x),
                {1.0f, 1.5f, 2.0f, 2.0f, 2.5f, 3.0f, 3.0f, 3.5f, 4.0f});
  // To the input's own size: no node at all.
  auto same = base_model({0, 1, 2, 2});
  add_int_initializer(same, "sizes", {1, 1, 2, 2});
  auto* s = add_node(same, "Resize", {"x", "", "", "sizes"}, "y");
  set_string(s, "mode", "linear");
  add_output(same, "y");
  const ImportedModel identity = import_model(save(same, "resize_same.onnx"));
  for (const auto& node : identity.graph.nodes()) EXPECT_NE(node.kind, graph::OpKind::Resize);
  expect_floats(run(identity, x), {1, 2, 3, 4});
}

// Concat along the height (axis 2), then the width (axis -1): x = [[1, 2], [3, 4]] above
// relu(-x), two rows of zeros, and that beside itself. Along the batch, refused.
TEST(OnnxImport, ConcatAlongSpatialAxesMatchesHandValues) {
  auto m = base_model({0, 1, 2, 2});
  add_initializer(m, "minus", {1}, {-1});
  add_node(m, "Mul", {"x", "minus"}, "negated");
  add_node(m, "Relu", {"negated"}, "zeros");
  set_int(add_node(m, "Concat", {"x", "zeros"}, "taller"), "axis", 2);    // [B, 1, 4, 2]
  set_int(add_node(m, "Concat", {"taller", "taller"}, "y"), "axis", -1);  // [B, 1, 4, 4]
  add_output(m, "y");
  const Tensor x = Tensor::from(std::vector<float>{1, 2, 3, 4}, {1, 1, 2, 2});
  const Tensor y = run(import_model(save(m, "concat_spatial.onnx")), x);
  ASSERT_EQ(y.shape(), (Shape{1, 1, 4, 4}));
  expect_floats(y, {1, 2, 1, 2, 3, 4, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0});
  auto batch = base_model({0, 1, 2, 2});
  set_int(add_node(batch, "Concat", {"x", "x"}, "y"), "axis", 0);
  add_output(batch, "y");
  train::testing::expect_error([&] { import_model(save(batch, "concat_batch.onnx")); },
                               {"(Concat)", "axis 0 of a rank-4 tensor"});
}

// x[:, :, ::2, 1::2] of a 4x4 image (PyTorch writes an end of INT64_MAX): rows 0 and 2, columns
// 1 and 3; exported by telar (with steps) and imported again, the same. A negative step (a
// reversal) is refused.
TEST(OnnxImport, StridedSliceMatchesHandValuesAndRoundTrips) {
  auto m = base_model({0, 1, 4, 4});
  add_int_initializer(m, "starts", {0, 1});
  add_int_initializer(
      m, "ends",
      {std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::max()});
  add_int_initializer(m, "axes", {2, 3});
  add_int_initializer(m, "steps", {2, 2});
  add_node(m, "Slice", {"x", "starts", "ends", "axes", "steps"}, "y");
  add_output(m, "y");
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i);
  const Tensor x = Tensor::from(v, {1, 1, 4, 4});
  ImportedModel model = import_model(save(m, "strided.onnx"));
  expect_floats(run(model, x), {1, 3, 9, 11});
  const fs::path again = temp_file("strided_again.onnx");
  export_model(model.graph, model.weights, again, {13, "test", {}, {}});
  expect_floats(run(import_model(again), x), {1, 3, 9, 11});

  auto reversed = base_model({0, 1, 4, 4});
  add_int_initializer(reversed, "starts", {-1});
  add_int_initializer(reversed, "ends", {std::numeric_limits<std::int64_t>::min()});
  add_int_initializer(reversed, "axes", {3});
  add_int_initializer(reversed, "steps", {-1});
  add_node(reversed, "Slice", {"x", "starts", "ends", "axes", "steps"}, "y");
  add_output(reversed, "y");
  train::testing::expect_error([&] { import_model(save(reversed, "reversed.onnx")); },
                               {"(Slice)", "a step of -1"});
}

// What PyTorch's F.interpolate does not export, or telar does not compute, is refused naming it.
TEST(OnnxImport, ResizeTelarDoesNotComputeIsRefused) {
  struct Bad {
    std::string mode, coordinates;
    std::vector<float> scales;  // or, where empty, sizes
    std::vector<std::int64_t> sizes;
    std::string expected;
    int opset = 13;
    std::string attribute = "";  // set to 1 (an int) or to "not_larger" (keep_aspect_ratio_policy)
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Bad cases[] = {
      {"cubic", "half_pixel", {1, 1, 2, 2}, {}, "mode 'cubic'"},
      {"nearest", "half_pixel", {1, 1, 2, 2}, {}, "nearest_mode 'round_prefer_floor'"},
      {"linear", "asymmetric", {1, 1, 2, 2}, {}, "'asymmetric'"},
      {"linear", "half_pixel", {1, 1, 1.5f, 1.5f}, {}, "gives 4.5000 pixels"},
      {"linear", "half_pixel", {1, 1, nan, 2}, {}, "scale nan of an axis of 3 pixels"},
      {"linear", "half_pixel", {1, 1, 1e30f, 2}, {}, "scale 1e+30"},
      {"linear", "half_pixel", {1, 2, 2, 2}, {}, "spatial axes only"},
      {"linear", "half_pixel", {2, 2}, {}, "scales of 2 float values for 4 axes"},
      {"linear", "half_pixel", {1, 1, 2, 2}, {}, "opset 11", 10},
      {"linear", "half_pixel", {}, {1, 2, 6, 6}, "sizes [1, 2, 6, 6] of [B, 1, 3, 3]"},
      {"linear", "half_pixel", {}, {6, 6}, "2 sizes for 4 axes"},
      {"linear", "pytorch_half_pixel", {}, {1, 1, 1, 6}, "pytorch_half_pixel to an axis of one"},
      {"linear", "half_pixel", {1, 1, 2, 2}, {}, "antialias", 18, "antialias"},
      {"linear",
       "half_pixel",
       {},
       {1, 1, 6, 6},
       "keep_aspect_ratio_policy 'not_larger'",
       18,
       "keep_aspect_ratio_policy"},
  };
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.expected);
    auto m = base_model({0, 1, 3, 3}, c.opset);
    std::vector<std::string> inputs{"x", ""};
    if (!c.scales.empty()) {
      add_initializer(m, "scales", {static_cast<std::int64_t>(c.scales.size())}, c.scales);
      inputs.push_back("scales");
    } else {
      add_int_initializer(m, "sizes", c.sizes);
      inputs.insert(inputs.end(), {"", "sizes"});
    }
    auto* n = add_node(m, "Resize", inputs, "y");
    set_string(n, "mode", c.mode);
    set_string(n, "coordinate_transformation_mode", c.coordinates);
    if (c.attribute == "antialias") set_int(n, "antialias", 1);
    if (c.attribute == "keep_aspect_ratio_policy")
      set_string(n, "keep_aspect_ratio_policy", "not_larger");
    add_output(m, "y");
    train::testing::expect_error([&] { import_model(save(m, "bad_resize.onnx")); },
                                 {"(Resize)", c.expected});
  }
}

// ConvNeXt's pieces: LayerNormalization over the channels (opset 17), a MatMul over the last
// axis of [B, H, W, C], and GELU's Erf after a Pow.
TEST(OnnxImport, LayerNormChannelsLastMatMulPowAndErfMatchHandValues) {
  auto m = base_model({1, 4}, 17);
  add_initializer(m, "scale", {4}, {1, 2, 1, 1});
  add_initializer(m, "bias", {4}, {0, 0, 1, 0});
  add_node(m, "LayerNormalization", {"x", "scale", "bias"}, "y");
  add_output(m, "y");
  const Tensor x = Tensor::from(std::vector<float>{1, 2, 3, 4}, {1, 4});
  // mean 2.5, variance 1.25.
  const double sd = std::sqrt(1.25 + 1e-5);
  const Tensor y = run(import_model(save(m, "layernorm.onnx")), x);
  const std::vector<double> expected{-1.5 / sd, 2 * -0.5 / sd, 0.5 / sd + 1, 1.5 / sd};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y.f32()[i], expected[i], 1e-5) << i;
  // Without a bias, and an epsilon of its own: one LayerNorm whose bias is a constant of zeros.
  auto nb = base_model({1, 4}, 17);
  add_initializer(nb, "scale", {4}, {1, 2, 1, 1});
  set_float(add_node(nb, "LayerNormalization", {"x", "scale"}, "y"), "epsilon", 0.75f);
  add_output(nb, "y");
  ImportedModel unbiased = import_model(save(nb, "layernorm_no_bias.onnx"));
  ASSERT_EQ(unbiased.graph.nodes().size(), 1u);
  EXPECT_EQ(unbiased.graph.nodes()[0].attr<graph::LayerNormAttrs>().eps, 0.75f);
  const double sd2 = std::sqrt(1.25 + 0.75);
  const Tensor y2 = run(std::move(unbiased), x);
  const std::vector<double> expected2{-1.5 / sd2, 2 * -0.5 / sd2, 0.5 / sd2, 1.5 / sd2};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y2.f32()[i], expected2[i], 1e-5) << i;

  auto mm = base_model({1, 1, 2, 3});
  add_initializer(mm, "W", {3, 2}, {1, 0, 0, 1, 1, -1});  // [K, N]
  add_node(mm, "MatMul", {"x", "W"}, "h");
  add_initializer(mm, "two", {}, {2.0f});
  add_node(mm, "Pow", {"h", "two"}, "sq");
  add_node(mm, "Erf", {"sq"}, "out");
  add_output(mm, "out");
  ImportedModel model = import_model(save(mm, "channels_last.onnx"));
  EXPECT_EQ(model.graph.value(model.graph.outputs()[0]).shape, (Shape{kBatchDim, 1, 2, 2}));
  // rows (1, 0, 0) -> (1, 0) and (0.5, 0.5, 0.5) -> (1, 0); squared, then erf.
  const Tensor in = Tensor::from(std::vector<float>{1, 0, 0, 0.5f, 0.5f, 0.5f}, {1, 1, 2, 3});
  const Tensor out = run(std::move(model), in);
  const std::vector<float> want{std::erf(1.0f), 0.0f, std::erf(1.0f), 0.0f};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(out.f32()[i], want[i], 1e-6) << i;
}

// Pow with any constant exponent, and ReduceMean over several axes (kept or dropped).
TEST(OnnxImport, PowAndAMeanOverSeveralAxesMatchHandValues) {
  auto m = base_model({1, 2, 2, 3});
  add_initializer(m, "three", {}, {3.0f});
  add_node(m, "Pow", {"x", "three"}, "cube");
  auto* mean = add_node(m, "ReduceMean", {"cube"}, "y");
  set_ints(mean, "axes", {-1, 1});  // C and W of [B, C, H, W]
  set_int(mean, "keepdims", 0);
  add_output(m, "y");
  ImportedModel model = import_model(save(m, "pow_mean.onnx"));
  EXPECT_EQ(model.graph.value(model.graph.outputs()[0]).shape, (Shape{kBatchDim, 2}));
  const Tensor x =
      Tensor::from(std::vector<float>{1, 2, 3, 0, 1, -1, 2, 0, 0, 1, 1, 1}, {1, 2, 2, 3});
  // Cubes: c0 (1 8 27 | 0 1 -1), c1 (8 0 0 | 1 1 1); per H row, the mean over C and W:
  // h0 (1 + 8 + 27 + 8 + 0 + 0) / 6 = 44 / 6, h1 (0 + 1 - 1 + 1 + 1 + 1) / 6 = 3 / 6.
  const Tensor y = run(std::move(model), x);
  expect_floats(y, {44.0f / 6, 0.5f});

  auto k = base_model({1, 2, 3});
  add_initializer(k, "half", {}, {-0.5f});
  add_node(k, "Pow", {"x", "half"}, "r");
  auto* mk = add_node(k, "ReduceMean", {"r"}, "z");
  set_ints(mk, "axes", {1, 2});
  add_output(k, "z");
  ImportedModel kept = import_model(save(k, "pow_mean_kept.onnx"));
  EXPECT_EQ(kept.graph.value(kept.graph.outputs()[0]).shape, (Shape{kBatchDim, 1, 1}));
  // 1 / sqrt(x) of (4 1 16 | 0.25 1 4) = (0.5 1 0.25 | 2 1 0.5): mean 5.25 / 6.
  const Tensor in = Tensor::from(std::vector<float>{4, 1, 16, 0.25f, 1, 4}, {1, 2, 3});
  expect_floats(run(std::move(kept), in), {5.25f / 6});

  // The batch axis cannot be averaged away (telar's batch is not a fixed dimension).
  auto b = base_model({1, 2, 3});
  set_ints(add_node(b, "ReduceMean", {"x"}, "m"), "axes", {0, 1});
  add_output(b, "m");
  train::testing::expect_error([&] { import_model(save(b, "mean_batch.onnx")); },
                               {"(ReduceMean)", "after the batch"});
}

// [B, 4] to [-1, 2] merges the batch with a 2 (a view, which may not reach the output); to
// [-1, 3] holds no whole sample.
TEST(OnnxImport, AReshapeThatMergesTheBatchIsRefused) {
  for (const std::int64_t last : {2, 3}) {
    auto m = base_model({2, 4});
    add_int_initializer(m, "target", {-1, last});
    add_node(m, "Reshape", {"x", "target"}, "y");
    add_output(m, "y");
    if (last == 2) {
      train::testing::expect_error([&] { import_model(save(m, "merge.onnx")); },
                                   {"output 'y'", "[B*2, 2]", "batch"});
    } else {
      train::testing::expect_error([&] { import_model(save(m, "merge.onnx")); },
                                   {"(Reshape)", "[B, 4] to [-1, 3]", "do not hold"});
    }
  }
}

// PyTorch's sequence-first heads, hand-built: x [B, L, E=4] -> Transpose [1, 0, 2] ([L, B, E])
// -> Add a bias per feature -> Reshape to [L, B*2, 2], the batch read from the transposed
// tensor's shape and multiplied by the heads -> Transpose [1, 0, 2] ([B*H, L, d]) -> Reshape to
// [B, H, L, d], batch first again. By hand: y[b, h, l, k] = x[b, l, 2h + k] + bias[2h + k], for
// L = 2 and for one token (L = 1, whose axis of 1 must not stick to the batch). The heads left
// merged with the batch at the output are refused, naming the output; so is a dimension
// computed from the batch by other than a product (B + 2).
TEST(OnnxImport, SequenceFirstHeadsSplitAsPyTorchWritesThem) {
  enum class End { BatchFirst, Merged, BatchPlusTwo };
  const std::vector<float> bias{10.0f, 20.0f, 30.0f, 40.0f};
  auto model = [&](End end, std::int64_t tokens) {
    auto m = base_model({0, tokens, 4});
    set_ints(add_node(m, "Transpose", {"x"}, "t0"), "perm", {1, 0, 2});
    add_initializer(m, "bias", {4}, bias);
    add_node(m, "Add", {"t0", "bias"}, "t");
    add_node(m, "Shape", {"t"}, "s");
    add_int_initializer(m, "i0", {0});
    add_int_initializer(m, "i1", {1});
    add_int_initializer(m, "two", {2});
    add_node(m, "Gather", {"s", "i0"}, "l");
    add_node(m, "Gather", {"s", "i1"}, "b");
    add_node(m, end == End::BatchPlusTwo ? "Add" : "Mul", {"b", "two"}, "bh");
    set_int(add_node(m, "Concat", {"l", "bh", "two"}, "target"), "axis", 0);
    add_node(m, "Reshape", {"t", "target"}, "r");
    set_ints(add_node(m, "Transpose", {"r"}, end == End::BatchFirst ? "q" : "y"), "perm",
             {1, 0, 2});
    if (end == End::BatchFirst) {
      set_int(add_node(m, "Concat", {"b", "two", "l", "two"}, "target2"), "axis", 0);
      add_node(m, "Reshape", {"q", "target2"}, "y");
    }
    add_output(m, "y");
    return m;
  };
  for (std::int64_t tokens : {2, 1}) {
    SCOPED_TRACE(std::to_string(tokens) + " tokens");
    ImportedModel imported = import_model(save(model(End::BatchFirst, tokens), "heads.onnx"));
    Tensor x({2, tokens, 4});
    for (std::int64_t i = 0; i < x.numel(); ++i) x.f32()[i] = static_cast<float>(i + 1);
    const Tensor y = run(std::move(imported), x);
    ASSERT_EQ(y.shape(), (Shape{2, 2, tokens, 2}));
    std::vector<float> expected;
    for (int b = 0; b < 2; ++b)
      for (int h = 0; h < 2; ++h)
        for (int l = 0; l < tokens; ++l)
          for (int k = 0; k < 2; ++k)
            expected.push_back(x.f32()[(b * tokens + l) * 4 + 2 * h + k] + bias[2 * h + k]);
    expect_floats(y, expected);
  }
  train::testing::expect_error(
      [&] { import_model(save(model(End::Merged, 2), "heads_merged.onnx")); },
      {"output 'y'", "[B*2, 2, 2]", "batch"});
  train::testing::expect_error(
      [&] { import_model(save(model(End::BatchPlusTwo, 2), "heads_plus.onnx")); },
      {"(Reshape)", "f(B)=3", "other than by multiplying"});
}

// Axes of 1 in a sequence-first view: x [B, 2, 1, 1] -> Transpose [1, 0, 2, 3] ([2, B, 1, 1]) ->
// Reshape to [2, B, 1] (two axes of 1 become one) -> Transpose [1, 0, 2]: x's values as
// [B, 2, 1].
TEST(OnnxImport, SequenceFirstAxesOfOneMerge) {
  auto m = base_model({0, 2, 1, 1});
  set_ints(add_node(m, "Transpose", {"x"}, "t"), "perm", {1, 0, 2, 3});
  add_node(m, "Shape", {"t"}, "s");
  add_int_initializer(m, "zero", {0});
  add_int_initializer(m, "two", {2});
  add_int_initializer(m, "one", {1});
  add_node(m, "Slice", {"s", "zero", "two"}, "lb");
  set_int(add_node(m, "Concat", {"lb", "one"}, "target"), "axis", 0);
  add_node(m, "Reshape", {"t", "target"}, "r");
  set_ints(add_node(m, "Transpose", {"r"}, "y"), "perm", {1, 0, 2});
  add_output(m, "y");
  ImportedModel imported = import_model(save(m, "ones.onnx"));
  Tensor x({3, 2, 1, 1});
  for (std::int64_t i = 0; i < x.numel(); ++i) x.f32()[i] = static_cast<float>(i + 1);
  const Tensor y = run(std::move(imported), x);
  ASSERT_EQ(y.shape(), (Shape{3, 2, 1}));
  expect_floats(y, {1, 2, 3, 4, 5, 6});
}

// A view whose axes the file reorders, plus a constant that varies along two of them (as
// Swin adds its relative-position bias and window mask to [B*windows, heads, N, N]): x [B, 2, 3]
// -> Transpose [2, 0, 1] ([3, B, 2]) -> Add c [3, 1, 2] -> Dropout (inference: none) ->
// Transpose [1, 2, 0]: y[b, h, w] = x[b, h, w] + c[w, 0, h]. Then the same view's Gather of
// index 1 along its first axis (attention's qkv[1]): y[b, h] = x[b, h, 1] + c[1, 0, h].
TEST(OnnxImport, AViewTakesAConstantAlongSeveralAxesAndGathersAnIndex) {
  const std::vector<float> c = {10, 20, 30, 40, 50, 60};  // c[w, 0, h] = 10 (2w + h + 1)
  for (const bool gather : {false, true}) {
    SCOPED_TRACE(gather ? "Gather" : "Transpose back");
    auto m = base_model({0, 2, 3});
    set_ints(add_node(m, "Transpose", {"x"}, "t"), "perm", {2, 0, 1});
    add_initializer(m, "c", {3, 1, 2}, c);
    add_node(m, "Add", {"t", "c"}, "a");
    add_node(m, "Dropout", {"a"}, "d");
    if (gather) {
      add_int_initializer(m, "one", {1});
      m.mutable_graph()->mutable_initializer()->rbegin()->clear_dims();  // a scalar index
      add_node(m, "Gather", {"d", "one"}, "y");
    } else {
      set_ints(add_node(m, "Transpose", {"d"}, "y"), "perm", {1, 2, 0});
    }
    add_output(m, "y");
    Tensor x({2, 2, 3});
    for (std::int64_t i = 0; i < x.numel(); ++i) x.f32()[i] = static_cast<float>(i);
    const Tensor y = run(import_model(save(m, "view_constant.onnx")), x);
    std::vector<float> expected;
    for (int b = 0; b < 2; ++b)
      for (int h = 0; h < 2; ++h)
        for (int w = gather ? 1 : 0; w < (gather ? 2 : 3); ++w)
          expected.push_back(static_cast<float>(6 * b + 3 * h + w) +
                             c[static_cast<std::size_t>(2 * w + h)]);
    ASSERT_EQ(y.shape(), gather ? (Shape{2, 2}) : (Shape{2, 2, 3}));
    expect_floats(y, expected);
  }
}

// Einsum as MaxViT's attention writes it, a batched matrix product: g = x·xᵀ per sample
// ("bik,bjk->bij", the second operand read transposed), then y = g·x ("bij,bjk->bik");
// by hand with loops. Equations that are not such a product are refused, naming the equation.
TEST(OnnxImport, EinsumOfBatchedMatrixProductsMatchesHandValues) {
  auto einsum = [](proto::ModelProto& m, std::vector<std::string> in, const std::string& out,
                   const std::string& equation) {
    set_string(add_node(m, "Einsum", std::move(in), out), "equation", equation);
  };
  auto m = base_model({0, 2, 3}, 12);
  einsum(m, {"x", "x"}, "g", "b i k, b j k -> b i j");
  einsum(m, {"g", "x"}, "y", "bij,bjk->bik");
  add_output(m, "y");
  Tensor x({2, 2, 3});
  for (std::int64_t i = 0; i < x.numel(); ++i) x.f32()[i] = static_cast<float>(i % 5) - 1.5f;
  const Tensor y = run(import_model(save(m, "einsum.onnx")), x);
  ASSERT_EQ(y.shape(), (Shape{2, 2, 3}));
  const float* xp = x.f32();
  std::vector<float> expected;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 3; ++k) {
        float v = 0;
        for (int j = 0; j < 2; ++j) {
          float g = 0;
          for (int c = 0; c < 3; ++c) g += xp[b * 6 + i * 3 + c] * xp[b * 6 + j * 3 + c];
          v += g * xp[b * 6 + j * 3 + k];
        }
        expected.push_back(v);
      }
  expect_floats(y, expected);
  for (const std::string equation :
       {"bik,bkj->bji", "bik,bkj->bij,", "b...k,bkj->bij", "bii,bij->bij"}) {
    auto bad = base_model({0, 2, 2}, 12);
    einsum(bad, {"x", "x"}, "y", equation);
    add_output(bad, "y");
    train::testing::expect_error([&] { import_model(save(bad, "einsum_bad.onnx")); },
                                 {"(Einsum)", "batched matrix product"});
  }
}

// Swin pads its windows' [B, H, W, C] tensors along H and W (channels-last): x [B, 2, 2, 1]
// padded by one row above and two columns on the right with 0.5. Axes 1 and 3 together are the
// channels of one layout or the other: refused.
TEST(OnnxImport, PadOfChannelsLastSpatialAxesMatchesHandValues) {
  for (const bool channels : {false, true}) {
    auto m = base_model({0, 2, 2, 1});
    add_int_initializer(m, "pads",
                        channels ? std::vector<std::int64_t>{0, 1, 0, 0, 0, 0, 0, 1}
                                 : std::vector<std::int64_t>{0, 1, 0, 0, 0, 0, 2, 0});
    add_initializer(m, "value", {}, {0.5f});
    add_node(m, "Pad", {"x", "pads", "value"}, "y");
    add_output(m, "y");
    if (channels) {
      train::testing::expect_error([&] { import_model(save(m, "pad_c.onnx")); },
                                   {"(Pad)", "[0, 1, 0, 0, 0, 0, 0, 1]", "NCHW or NHWC"});
      continue;
    }
    Tensor x({1, 2, 2, 1});
    for (std::int64_t i = 0; i < x.numel(); ++i) x.f32()[i] = static_cast<float>(i + 1);
    const Tensor y = run(import_model(save(m, "pad_nhwc.onnx")), x);
    ASSERT_EQ(y.shape(), (Shape{1, 3, 4, 1}));
    expect_floats(y, {0.5f, 0.5f, 0.5f, 0.5f, 1, 2, 0.5f, 0.5f, 3, 4, 0.5f, 0.5f});
  }
}

// A class token expanded over the batch as PyTorch exports cls.expand(B, -1): the target shape
// is folded from the input's shape, its -1 resolved by Where(Equal(shape, -1), 1, shape). The
// batch size compared with -1 is unequal whatever batch telar binds, so the target's first
// element stays the batch; compared with 2 it depends on the batch, and the Expand is refused.
// A Slice bounded by the batch size and a MatMul that would broadcast are refused.
TEST(OnnxImport, ExpandOverTheBatchFoldsItsShapeAndMatMulOfComputedTensorsIsChecked) {
  for (std::int64_t compared : {-1, 2}) {
    SCOPED_TRACE("batch size compared with " + std::to_string(compared));
    auto m = base_model({0, 3});
    add_initializer(m, "cls", {1, 3}, {1.5f, -2.0f, 4.0f});
    add_int_initializer(m, "zero", {0});
    add_int_initializer(m, "one", {1});
    add_int_initializer(m, "compared", {compared});
    add_node(m, "Shape", {"x"}, "s");
    add_node(m, "Slice", {"s", "zero", "one"}, "b");
    add_node(m, "Equal", {"b", "compared"}, "e");
    add_node(m, "Where", {"e", "one", "b"}, "b1");
    set_int(add_node(m, "Concat", {"b1", "one"}, "t"), "axis", 0);
    add_node(m, "Expand", {"cls", "t"}, "y");
    add_output(m, "y");
    const fs::path file = save(m, "expand" + std::to_string(compared) + ".onnx");
    if (compared == 2) {
      train::testing::expect_error([&] { import_model(file); }, {"(Expand)", "over the batch"});
      continue;
    }
    ImportedModel model = import_model(file);
    Tensor x({2, 3});
    expect_floats(run(std::move(model), x), {1.5f, -2.0f, 4.0f, 1.5f, -2.0f, 4.0f});
  }
  {  // A slice of a shape whose bound is the batch size: what it keeps depends on the batch.
    auto m = base_model({0, 3});
    add_int_initializer(m, "zero", {0});
    add_int_initializer(m, "one", {1});
    add_node(m, "Shape", {"x"}, "s");
    add_node(m, "Slice", {"s", "zero", "one"}, "b");
    add_node(m, "Slice", {"s", "zero", "b"}, "first_b");
    add_node(m, "Reshape", {"x", "first_b"}, "y");
    add_output(m, "y");
    train::testing::expect_error([&] { import_model(save(m, "slice_by_batch.onnx")); },
                                 {"(Slice)", "depends on the batch size"});
  }
  // [B, 4, 5] by [B, 1, 5, 4]: valid ONNX (broadcast), which telar does not do.
  auto m = base_model({2, 4, 5});
  add_int_initializer(m, "heads", {0, 1, 5, 4});
  add_node(m, "Reshape", {"x", "heads"}, "h");
  add_node(m, "MatMul", {"x", "h"}, "y");
  add_output(m, "y");
  train::testing::expect_error([&] { import_model(save(m, "matmul.onnx")); },
                               {"(MatMul)", "leading dimensions"});
}

// A transformer's tokens [B, 2, 3] by a constant [3, 2] (the channels-last Linear), softmax over
// the last axis at opset 11 (which flattens from `axis`: the last alone), then one token: x[:, 0]
// (a scalar index drops the axis) or x[:, [-1]] (a 1-D one keeps it). By hand: token 0 is
// [1, 0, 0], its product W's first row [0, ln 3], its softmax [1/4, 3/4]; token 1 is [0, 1, 0],
// its product [0, 0], its softmax [1/2, 1/2]. A Softmax over another axis is refused.
TEST(OnnxImport, TokensByAConstantSoftmaxOverTheLastAxisAndOneTokenMatchHandValues) {
  for (bool scalar : {true, false}) {
    SCOPED_TRACE(scalar ? "x[:, 0]" : "x[:, [-1]]");
    auto m = base_model({0, 2, 3}, 11);
    add_initializer(m, "w", {3, 2}, {0.0f, std::log(3.0f), 0.0f, 0.0f, 1.0f, 1.0f});
    add_node(m, "MatMul", {"x", "w"}, "p");
    set_int(add_node(m, "Softmax", {"p"}, "s"), "axis", 2);
    auto* index = m.mutable_graph()->add_initializer();
    index->set_name("token");
    index->set_data_type(proto::TensorProto::INT64);
    if (!scalar) index->add_dims(1);
    index->add_int64_data(scalar ? 0 : -1);
    set_int(add_node(m, "Gather", {"s", "token"}, "y"), "axis", 1);
    add_output(m, "y");
    ImportedModel model = import_model(save(m, scalar ? "token0.onnx" : "token1.onnx"));
    const Tensor x = Tensor::from(std::vector<float>{1, 0, 0, 0, 1, 0}, {1, 2, 3});
    const Tensor y = run(std::move(model), x);
    EXPECT_EQ(y.shape(), scalar ? Shape({1, 2}) : Shape({1, 1, 2}));
    if (scalar)
      expect_floats(y, {0.25f, 0.75f});
    else
      expect_floats(y, {0.5f, 0.5f});
  }
  auto m = base_model({0, 2, 3}, 11);
  set_int(add_node(m, "Softmax", {"x"}, "y"), "axis", 1);
  add_output(m, "y");
  train::testing::expect_error([&] { import_model(save(m, "softmax1.onnx")); },
                               {"(Softmax)", "last axis"});
}

// Samples of one channel and a smaller image fed to a 3-channel model: the channel is copied
// and the image centred in zeros, before the model's first node.
TEST(OnnxImport, AFeedOfOtherSamplesIsReplicatedAndPadded) {
  auto m = base_model({1, 3, 4, 5});
  add_node(m, "Relu", {"x"}, "y");
  add_output(m, "y");
  const fs::path p = save(m, "feed.onnx");
  ImportedModel model = import_model(p, {std::nullopt, Shape{1, 2, 2}, std::nullopt});
  EXPECT_EQ(model.graph.value(model.graph.inputs()[0]).shape, (Shape{kBatchDim, 1, 2, 2}));
  const Tensor x = Tensor::from(std::vector<float>{1, 2, 3, 4}, {1, 1, 2, 2});
  // 4 x 5: one row above and below, one column left and two right ((5 - 2) / 2 = 1 on the left).
  const std::vector<float> plane{0, 0, 0, 0, 0,  //
                                 0, 1, 2, 0, 0,  //
                                 0, 3, 4, 0, 0,  //
                                 0, 0, 0, 0, 0};
  std::vector<float> expected;
  for (int c = 0; c < 3; ++c) expected.insert(expected.end(), plane.begin(), plane.end());
  expect_floats(run(std::move(model), x), expected);
  train::testing::expect_error(
      [&] {
        import_model(p, {std::nullopt, Shape{2, 2, 2}, std::nullopt});
      },
      {"samples of [2, 2, 2]", "[3, 4, 5]"});
  train::testing::expect_error(
      [&] {
        import_model(p, {std::nullopt, Shape{1, 8, 8}, std::nullopt});
      },
      {"cannot be fed"});
}

// A training-mode export: BatchNormalization with its running statistics as extra outputs, and
// Dropout with training_mode true, which becomes telar's Dropout.
TEST(OnnxImport, TrainingModeBatchNormAndDropoutImport) {
  auto m = base_model({2, 2, 1, 1});
  for (const char* t : {"gamma", "beta", "mean", "var"}) add_initializer(m, t, {2}, {1, 1});
  auto* bn = add_node(m, "BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, "h");
  bn->add_output("new_mean");
  bn->add_output("new_var");
  set_int(bn, "training_mode", 1);
  add_initializer(m, "ratio", {}, {0.25f});
  auto* training = m.mutable_graph()->add_initializer();
  training->set_name("training");
  training->set_data_type(proto::TensorProto::BOOL);
  training->add_int32_data(1);
  add_node(m, "Dropout", {"h", "ratio", "training"}, "y");
  add_output(m, "y");
  ImportedModel model = import_model(save(m, "trainmode.onnx"));
  ASSERT_EQ(model.graph.nodes().size(), 2u);
  EXPECT_EQ(model.graph.nodes()[0].kind, graph::OpKind::BatchNorm2d);
  EXPECT_EQ(model.graph.nodes()[1].kind, graph::OpKind::Dropout);
  EXPECT_FLOAT_EQ(model.graph.nodes()[1].attr<graph::DropoutAttrs>().p, 0.25f);

  add_node(m, "Add", {"y", "new_mean"}, "z");
  add_output(m, "z");
  train::testing::expect_error([&] { import_model(save(m, "trainmode2.onnx")); },
                               {"'new_mean'", "running statistics", "keeps to itself"});
}

TEST(OnnxImport, OpsetOutsideTheSupportedRangeIsRefused) {
  auto m = base_model({1, 4}, 7);
  add_node(m, "Relu", {"x"}, "y");
  add_output(m, "y");
  train::testing::expect_error([&] { import_model(save(m, "opset7.onnx")); },
                               {"opset 7 is outside the supported range 9 to 18"});
}

TEST(OnnxImport, ADynamicInputNeedsItsShapeGiven) {
  auto m = base_model({0, 3, 0, 0});
  add_node(m, "Relu", {"x"}, "y");
  add_output(m, "y");
  const fs::path p = save(m, "dynamic.onnx");
  train::testing::expect_error([&] { import_model(p); }, {"dynamic shape [B, 3, ?, ?]", "--input"});
  const ImportedModel model = import_model(p, {Shape{3, 8, 8}, std::nullopt, std::nullopt});
  EXPECT_EQ(model.graph.value(model.graph.inputs()[0]).shape, (Shape{kBatchDim, 3, 8, 8}));
  train::testing::expect_error(
      [&] {
        import_model(p, {Shape{4, 8, 8}, std::nullopt, std::nullopt});
      },
      {"fixed at"});
  // Sizes for the dynamic dimensions alone (infer's --inputs): the fixed channels stay 3.
  const ImportedModel sized = import_model(p, {std::nullopt, std::nullopt, Shape{4, 5, 6}});
  EXPECT_EQ(sized.graph.value(sized.graph.inputs()[0]).shape, (Shape{kBatchDim, 3, 5, 6}));
}

TEST(OnnxImport, AnInitializerWhoseSizeDisagreesWithItsDimsIsRefused) {
  auto m = base_model({1, 2});
  add_initializer(m, "W", {3, 2}, {1, 2, 3, 4, 5});
  add_node(m, "Gemm", {"x", "W"}, "y");
  add_output(m, "y");
  train::testing::expect_error([&] { import_model(save(m, "short.onnx")); },
                               {"tensor 'W' has dims [3, 2] (6 values) but holds 5"});
}

TEST(OnnxImport, AnUndefinedInputIsRefused) {
  auto m = base_model({1, 4});
  add_node(m, "Relu", {"nowhere"}, "y");
  add_output(m, "y");
  train::testing::expect_error([&] { import_model(save(m, "undefined.onnx")); },
                               {"'nowhere' is not defined"});
}

// What the fuzzer found in damaged files: a Concat left without inputs, and sizes no machine
// holds (the input's own, or a Pad's), refused where their products would overflow 64 bits.
TEST(OnnxImport, AConcatOfNothingAndSizesNoMachineHoldsAreRefused) {
  auto m = base_model({1, 4});
  set_int(add_node(m, "Concat", {}, "y"), "axis", 1);
  add_output(m, "y");
  train::testing::expect_error([&] { import_model(save(m, "concat0.onnx")); },
                               {"'Concat_y' (Concat)", "a Concat of no inputs"});

  auto huge = base_model({1, 3, std::int64_t{1} << 31, std::int64_t{1} << 31});
  add_node(huge, "Relu", {"x"}, "y");
  add_output(huge, "y");
  train::testing::expect_error([&] { import_model(save(huge, "huge_input.onnx")); },
                               {"value 'x'", "more elements than 64 bits count"});

  auto padded = base_model({1, 3, 8, 8});
  add_int_initializer(padded, "pads", {0, 0, 0, 0, 0, 0, std::int64_t{1} << 61, 0});
  add_node(padded, "Pad", {"x", "pads"}, "y");
  add_output(padded, "y");
  train::testing::expect_error([&] { import_model(save(padded, "huge_pad.onnx")); },
                               {"more elements than 64 bits count"});
}

// Folds of constants are shape arithmetic and small tensors: a file whose folds go on making
// millions of values (the fuzzer's, fold after fold) is refused once they pass 2^24 in all,
// at the node that passes it: the fifth of 2^22 each, the first four (2^24) folded.
TEST(OnnxImport, ConstantFoldsPastTheirBudgetAreRefused) {
  auto m = base_model({1, 4});
  add_int_initializer(m, "size", {std::int64_t{1} << 22});
  for (int k = 0; k < 5; ++k) add_node(m, "ConstantOfShape", {"size"}, "c" + std::to_string(k));
  add_node(m, "Relu", {"x"}, "y");
  add_output(m, "y");
  train::testing::expect_error(
      [&] { import_model(save(m, "folds.onnx")); },
      {"'ConstantOfShape_c4' (ConstantOfShape)", "more than 16777216 values in all"});
}

TEST(OnnxImport, MissingExternalDataIsNamed) {
  auto m = base_model({1, 2});
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("W");
  t->set_data_type(proto::TensorProto::FLOAT);
  t->add_dims(2);
  t->add_dims(2);
  t->set_data_location(proto::TensorProto::EXTERNAL);
  auto* loc = t->add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  add_node(m, "Gemm", {"x", "W"}, "y");
  add_output(m, "y");
  train::testing::expect_error([&] { import_model(save(m, "external.onnx")); },
                               {"weights.bin', which is missing"});
}

TEST(OnnxImport, TruncatedAndForeignFilesAreNotOnnxModels) {
  auto m = base_model({1, 4});
  add_node(m, "Relu", {"x"}, "y");
  add_output(m, "y");
  std::string bytes;
  m.SerializeToString(&bytes);
  const fs::path truncated = temp_file("truncated.onnx");
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  train::testing::expect_error([&] { import_model(truncated); }, {"not an ONNX model"});
  const fs::path text = temp_file("text.onnx");
  std::ofstream(text) << "this is not a model\n";
  train::testing::expect_error([&] { import_model(text); }, {"not an ONNX model"});
  train::testing::expect_error([&] { import_model(temp_file("missing.onnx")); }, {"no such file"});
}

// The commands: `telar models show FILE.onnx`, and `telar infer` on a given .npy input writing
// the model's output, checked by hand (relu(x W^T) with W = [[1, -1], [2, 0]]).
TEST(OnnxCli, ModelsShowAndInferOnGivenInputs) {
  auto m = base_model({1, 2});
  add_initializer(m, "W", {2, 2}, {1, 2, -1, 0});  // [K, N] for MatMul
  add_node(m, "MatMul", {"x", "W"}, "h");
  add_node(m, "Relu", {"h"}, "y");
  add_output(m, "y");
  const fs::path model = save(m, "cli.onnx");
  const auto shown = telar::testing::run_telar({"models", "show", model.string()});
  ASSERT_EQ(shown.status, 0) << shown.err;
  EXPECT_NE(shown.out.find("Linear"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("2->2"), std::string::npos) << shown.out;

  const fs::path x = temp_file("x.npy"), y = temp_file("y.npy");
  write_npy(x, Tensor::from(std::vector<float>{1, 1, 3, -1, 0, 2}, {3, 2}));
  fs::remove(y);
  const auto run =
      telar::testing::run_telar({"infer", "--model", model.string(), "--inputs", x.string(),
                                 "--outputs", y.string(), "--warmup", "0", "--repeats", "1"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("batch 3"), std::string::npos) << run.out;
  const Tensor out = read_npy(y);
  ASSERT_EQ(out.shape(), (Shape{3, 2}));
  // x W: (1,1)->(0, 2), (3,-1)->(4, 6), (0,2)->(-2, 0); relu.
  const std::vector<float> expected{0, 2, 4, 6, 0, 0};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(out.f32()[i], expected[i]) << i;
  // The file's batch is the batch: another --batch beside it is refused, not ignored.
  const auto batch =
      telar::testing::run_telar({"infer", "--model", model.string(), "--inputs", x.string(),
                                 "--outputs", y.string(), "--batch", "4"});
  EXPECT_EQ(batch.status, 2);
  EXPECT_NE(batch.err.find("holds a batch of 3, not --batch 4"), std::string::npos) << batch.err;

  write_npy(x, Tensor::from(std::vector<float>{1, 2, 3}, {1, 3}));
  const auto bad = telar::testing::run_telar(
      {"infer", "--model", model.string(), "--inputs", x.string(), "--outputs", y.string()});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("does not fit the model's input"), std::string::npos) << bad.err;

  // A file whose image size is dynamic takes the --inputs file's where --input does not give it.
  auto dynamic = base_model({0, 1, 0, 0});
  add_node(dynamic, "Relu", {"x"}, "y");
  add_output(dynamic, "y");
  const fs::path any_size = save(dynamic, "any_size.onnx");
  write_npy(x, Tensor::from(std::vector<float>{1, -2, 3, -4, 5, -6}, {1, 1, 2, 3}));
  const auto sized =
      telar::testing::run_telar({"infer", "--model", any_size.string(), "--inputs", x.string(),
                                 "--outputs", y.string(), "--warmup", "0", "--repeats", "1"});
  ASSERT_EQ(sized.status, 0) << sized.err;
  const Tensor relu = read_npy(y);
  ASSERT_EQ(relu.shape(), (Shape{1, 1, 2, 3}));
  const std::vector<float> positive{1, 0, 3, 0, 5, 0};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(relu.f32()[i], positive[i]) << i;
  const auto classes =
      telar::testing::run_telar({"infer", "--model", model.string(), "--classes", "10"});
  EXPECT_EQ(classes.status, 2);
  EXPECT_NE(classes.err.find("--classes does not apply"), std::string::npos) << classes.err;
}

// `telar simulate` lowers an imported model's layers onto the accelerator like a zoo model's.
TEST(OnnxCli, SimulateRunsAnImportedModel) {
  auto m = base_model({1, 16});
  std::vector<float> w(16 * 8);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) - 3.0f;
  add_initializer(m, "W", {16, 8}, w);
  add_node(m, "MatMul", {"x", "W"}, "y");
  add_output(m, "y");
  const fs::path model = save(m, "sim.onnx");
  const std::string out = temp_file("simulate").string();
  const auto run = telar::testing::run_telar(
      {"simulate", "--model", model.string(), "--backend",
       std::string("sim:") + TELAR_SOURCE_DIR + "/configs/maeri_128mses_128_bw.cfg", "--out", out,
       "--overwrite"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("1 simulated"), std::string::npos) << run.out;
  EXPECT_TRUE(fs::exists(fs::path(out) / "report.html"));
}

TEST(OnnxImport, RecognisesOnnxFileNames) {
  EXPECT_TRUE(is_onnx_file("resnet18.onnx"));
  EXPECT_TRUE(is_onnx_file("models/x.onnx"));
  EXPECT_FALSE(is_onnx_file("mnist_cnn"));
  EXPECT_FALSE(is_onnx_file(".onnx"));
}

}  // namespace
}  // namespace telar::onnx
