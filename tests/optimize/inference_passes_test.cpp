// Each inference pass on small graphs made for it: what it rewrites (and what it must leave
// alone), hand-derived folded weights, and the outputs against the graph as built, on the
// reference kernels and on oneDNN.
#include <gtest/gtest.h>

#include <limits>

#include "../ops/test_util.hpp"
#include "backend/inference.hpp"
#include "core/error.hpp"
#include "graph/builder.hpp"
#include "optimize/inference.hpp"
#include "optimize/passes.hpp"
#include "optimize_test_util.hpp"

using namespace telar;
using namespace telar::graph;
using optimize::testing::count_nodes;
using optimize::testing::eval_output;
using optimize::testing::relative_difference;
using optimize::testing::weights_for;

namespace {

const Node& node_named(const Graph& g, const std::string& name) {
  const Node* n = g.find_node(name);
  if (!n) throw std::runtime_error("no node " + name);
  return *n;
}

// The pass's graph computes what the source graph does, every output, on both CPU kernel sets.
void expect_same_outputs(const Graph& source, ParameterSet& params, const optimize::Rewritten& r,
                         const Shape& input, double tolerance) {
  Rng rng(5);
  const Tensor x = ops::testing::uniform(input, rng);
  ParameterSet rewritten = r.params;
  for (const char* backend : {"cpu:ref", "cpu"}) {
    auto want = backend::compile(backend::parse_backend_spec(backend), source, params);
    auto got = backend::compile(backend::parse_backend_spec(backend), r.graph, rewritten);
    want->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
    got->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
    for (std::size_t i = 0; i < source.outputs().size(); ++i)
      EXPECT_LE(relative_difference(want->output(i), got->output(i)), tolerance)
          << backend << ", output " << i;
  }
}

TEST(RemoveDropout, ReadersReadItsInput) {
  GraphBuilder b("m");
  ValueId x = b.input("x", {6});
  ValueId h = b.dropout(b.relu(b.linear(x, 8, "fc1"), "act"), 0.5f, "drop");
  b.output(b.linear(h, 3, "fc2"));
  b.output(b.dropout(h, 0.2f, "drop_out"));  // a dropout that is a graph output
  const Graph g = b.finish();
  ParameterSet params = weights_for(g, 1);
  const optimize::Rewritten r = optimize::remove_dropout(g, params);
  EXPECT_EQ(r.rewrites, 2);
  EXPECT_EQ(count_nodes(r.graph, OpKind::Dropout), 0);
  EXPECT_EQ(r.graph.outputs().size(), 2u);
  EXPECT_EQ(r.graph.value(r.graph.outputs()[1]).producer, node_named(r.graph, "act").id);
  expect_same_outputs(g, params, r, {4, 6}, 0.0);
}

// 1x1 convolution, one input channel, two output channels: the folded weights by hand.
// s = gamma / sqrt(var + eps): channel 0: 1.5 / sqrt(3) = 0.8660254, channel 1: 0.5 / 0.5 = 1.
// weight' = weight * s: 2 * 0.8660254 = 1.7320508, -1 * 1 = -1.
// bias' = (0 - mean) * s + beta: -1 * 0.8660254 + 0.25 = -0.6160254, -2 * 1 - 1 = -3.
TEST(FoldBatchNorm, FoldedWeightsByHand) {
  GraphBuilder b("m");
  ValueId x = b.input("x", {1, 3, 3});
  b.output(b.batchnorm2d(b.conv2d(x, 2, 1, 1, 0, 1, /*bias=*/false, "conv"), "bn"));
  const Graph g = b.finish();
  ParameterSet params = ParameterSet::initialize(g, 1);
  const Node& conv = node_named(g, "conv");
  const Node& bn = node_named(g, "bn");
  const auto fill = [&](ValueId id, std::initializer_list<float> v) {
    std::copy(v.begin(), v.end(), params.at(id).f32());
  };
  fill(conv.inputs[1], {2.0f, -1.0f});
  fill(bn.inputs[1], {1.5f, 0.5f});    // gamma
  fill(bn.inputs[2], {0.25f, -1.0f});  // beta
  fill(bn.inputs[3], {1.0f, 2.0f});    // running mean
  fill(bn.inputs[4], {3.0f, 0.25f});   // running variance
  const optimize::Rewritten r = optimize::fold_batchnorm(g, params);
  EXPECT_EQ(r.rewrites, 1);
  ASSERT_EQ(count_nodes(r.graph, OpKind::BatchNorm2d), 0);
  const Node& folded = node_named(r.graph, "conv");
  ASSERT_TRUE(folded.attr<Conv2dAttrs>().bias);
  const float* w = r.params.at(folded.inputs[1]).f32();
  const float* bias = r.params.at(folded.inputs[2]).f32();
  EXPECT_NEAR(w[0], 1.7320508f, 1e-5);
  EXPECT_NEAR(w[1], -1.0f, 1e-4);  // eps = 1e-5 moves s by 2e-5
  EXPECT_NEAR(bias[0], -0.6160254f, 1e-5);
  EXPECT_NEAR(bias[1], -3.0f, 1e-4);
  expect_same_outputs(g, params, r, {2, 1, 3, 3}, 1e-5);
}

TEST(FoldBatchNorm, ConvolutionsWithBiasGroupsAndStrides) {
  GraphBuilder b("m");
  ValueId x = b.input("x", {4, 9, 9});
  ValueId h = b.relu(b.batchnorm2d(b.conv2d(x, 8, 3, 2, 1, 1, true, "c1")));
  h = b.batchnorm2d(b.conv2d(h, 8, 3, 1, 1, 8, false, "dw"));  // depthwise
  b.output(b.batchnorm2d(b.conv2d(h, 6, 1, 1, 0, 2, true, "grouped")));
  const Graph g = b.finish();
  ParameterSet params = weights_for(g, 2);
  const optimize::Rewritten r = optimize::fold_batchnorm(g, params);
  EXPECT_EQ(r.rewrites, 3);
  EXPECT_EQ(count_nodes(r.graph, OpKind::BatchNorm2d), 0);
  expect_same_outputs(g, params, r, {2, 4, 9, 9}, 1e-5);
}

TEST(FoldBatchNorm, LeavesAConvolutionWhoseOutputOthersRead) {
  GraphBuilder b("m");
  ValueId x = b.input("x", {3, 6, 6});
  ValueId c = b.conv2d(x, 4, 3, 1, 1, 1, true, "conv");
  b.output(b.add(b.batchnorm2d(c, "bn"), c));  // the raw conv output is read too
  const Graph g = b.finish();
  ParameterSet params = weights_for(g, 3);
  const optimize::Rewritten r = optimize::fold_batchnorm(g, params);
  EXPECT_EQ(r.rewrites, 0);
  EXPECT_EQ(count_nodes(r.graph, OpKind::BatchNorm2d), 1);
  expect_same_outputs(g, params, r, {2, 3, 6, 6}, 0.0);
}

// A basic residual block: relu(conv2(relu(conv1(r))) + r), r read by conv1 before conv2.
Graph residual_block(bool read_summand_after) {
  GraphBuilder b("m");
  ValueId x = b.input("x", {4, 8, 8});
  ValueId r = b.relu(b.conv2d(x, 6, 3, 1, 1, 1, true, "stem"), "r");
  ValueId h = b.relu(b.conv2d(r, 6, 3, 1, 1, 1, true, "conv1"));
  ValueId y = b.add(b.conv2d(h, 6, 3, 1, 1, 1, true, "conv2"), r, "sum");
  if (read_summand_after) y = b.add(y, r, "again");  // r is read after conv2
  b.output(b.relu(y, "out"));
  return b.finish();
}

TEST(FuseResidualAdd, TheLaterConvolutionTakesTheSum) {
  const Graph g = residual_block(false);
  ParameterSet params = weights_for(g, 4);
  const optimize::Rewritten r = optimize::fuse_residual_add(g, params);
  EXPECT_EQ(r.rewrites, 1);
  EXPECT_EQ(count_nodes(r.graph, OpKind::Add), 0);
  const Node& conv2 = node_named(r.graph, "conv2");
  EXPECT_TRUE(conv2.attr<Conv2dAttrs>().post.sum);
  EXPECT_EQ(conv2.inputs.back(), node_named(r.graph, "r").outputs[0]);
  expect_same_outputs(g, params, r, {2, 4, 8, 8}, 1e-6);
}

TEST(FuseResidualAdd, LeavesASummandReadAfterTheConvolution) {
  const Graph g = residual_block(true);
  ParameterSet params = weights_for(g, 5);
  const optimize::Rewritten r = optimize::fuse_residual_add(g, params);
  EXPECT_EQ(r.rewrites, 0);
  EXPECT_EQ(count_nodes(r.graph, OpKind::Add), 2);
}

TEST(FuseResidualAdd, LeavesAGraphInputAndBroadcasting) {
  GraphBuilder b("m");
  ValueId x = b.input("x", {4, 5, 5});
  ValueId y = b.add(b.conv2d(x, 4, 3, 1, 1, 1, true, "conv"), x, "sum");  // x: an input
  b.output(y);
  const Graph g = b.finish();
  ParameterSet params = weights_for(g, 6);
  EXPECT_EQ(optimize::fuse_residual_add(g, params).rewrites, 0);
}

// An Add of a main path and "down", a strided 1x1 convolution of the same value r. The main
// path is "main", one strided 3x3 convolution of r, or, as ResNet's downsampling block when
// PyTorch exports it, "conv1", a ReLU and "conv2" (then down comes after conv2).
Graph shortcut_block(bool resnet_main_path) {
  GraphBuilder b("m");
  ValueId x = b.input("x", {4, 8, 8});
  ValueId r = b.relu(b.conv2d(x, 4, 3, 1, 1, 1, true, "stem"), "r");
  ValueId main = resnet_main_path ? b.conv2d(b.relu(b.conv2d(r, 6, 3, 2, 1, 1, true, "conv1")), 6,
                                             3, 1, 1, 1, true, "conv2")
                                  : b.conv2d(r, 6, 3, 2, 1, 1, true, "main");
  ValueId down = b.conv2d(r, 6, 1, 2, 0, 1, true, "down");
  b.output(b.relu(b.add(main, down, "sum")));
  return b.finish();
}

TEST(FuseResidualAdd, DownsampleBranchesBothConvolutions) {
  const Graph g = shortcut_block(false);
  ParameterSet params = weights_for(g, 7);
  const optimize::Rewritten r2 = optimize::fuse_residual_add(g, params);
  EXPECT_EQ(r2.rewrites, 1);
  EXPECT_TRUE(node_named(r2.graph, "down").attr<Conv2dAttrs>().post.sum);
  EXPECT_FALSE(node_named(r2.graph, "main").attr<Conv2dAttrs>().post.any());
  expect_same_outputs(g, params, r2, {2, 4, 8, 8}, 1e-6);
}

TEST(ScheduleShortcutsFirst, TheProjectionRunsBeforeTheMainPathsLastConvolution) {
  const Graph g = shortcut_block(true);
  ParameterSet params = weights_for(g, 12);
  const optimize::Rewritten r = optimize::schedule_shortcuts_first(g, params);
  EXPECT_EQ(r.rewrites, 1);
  ASSERT_EQ(r.graph.nodes().size(), g.nodes().size());
  EXPECT_LT(node_named(r.graph, "down").id, node_named(r.graph, "conv2").id);
  EXPECT_GT(node_named(r.graph, "down").id, node_named(r.graph, "conv1").id);
  expect_same_outputs(g, params, r, {2, 4, 8, 8}, 0.0);
  // Then the main path's convolution takes the sum.
  const optimize::InferenceGraph opt = optimize::optimize_for_inference(g, params);
  EXPECT_TRUE(node_named(opt.graph, "conv2").attr<Conv2dAttrs>().post.sum);
  EXPECT_FALSE(node_named(opt.graph, "down").attr<Conv2dAttrs>().post.sum);
}

TEST(ScheduleShortcutsFirst, LeavesTwoConvolutionsOfTheSameValueInTheirOrder) {
  const Graph g = shortcut_block(false);
  ParameterSet params = weights_for(g, 14);
  EXPECT_EQ(optimize::schedule_shortcuts_first(g, params).rewrites, 0);
}

TEST(ScheduleShortcutsFirst, LeavesAConvolutionThatReadsTheMainPath) {
  GraphBuilder b("m");
  ValueId x = b.input("x", {4, 8, 8});
  ValueId a = b.relu(b.conv2d(x, 4, 3, 1, 1, 1, true, "a"), "ra");
  ValueId c = b.conv2d(a, 4, 3, 1, 1, 1, true, "c");                // the earlier operand
  ValueId d = b.conv2d(b.relu(c, "rc"), 4, 1, 1, 0, 1, true, "d");  // reads c: cannot move
  b.output(b.add(c, d, "sum"));
  const Graph g = b.finish();
  ParameterSet params = weights_for(g, 13);
  EXPECT_EQ(optimize::schedule_shortcuts_first(g, params).rewrites, 0);
}

// ONNX's ceil_mode, imported as a Pad of -inf at the bottom and right in front of the MaxPool2d,
// becomes the pooling's end padding: on a 10x10 input (3x3, stride 2: 4x4 in floor mode, 5x5 in
// ceil mode) and on a 10x8 one (1 row, 0 columns more: 5x3). Left alone: a Pad of zeros, a Pad at
// the top, a Pad another node reads too, and a MaxPool2d that pads itself.
TEST(FoldPadIntoPool, CeilModeBecomesEndPadding) {
  GraphBuilder b("m");
  Graph& g = b.graph();
  ValueId x = b.input("x", {3, 10, 10});
  const float inf = std::numeric_limits<float>::infinity();
  const auto pad = [&](ValueId v, PadAttrs p, const std::string& name) {
    return g.add_node(OpKind::Pad, name, p, {v});
  };
  ValueId c = b.conv2d(x, 4, 3, 1, 1, 1, true, "c");
  ValueId p1 = b.maxpool2d(pad(c, {0, 0, 1, 1, -inf}, "ceil_pad"), 3, 2, 0, "pool1");
  Conv2dAttrs wide;  // 1x3: 10x8
  wide.in_channels = 3;
  wide.out_channels = 4;
  wide.kernel_h = 1;
  wide.kernel_w = 3;
  ValueId c2 = b.conv2d(x, wide, "c2");
  ValueId rows = pad(c2, {0, 0, 1, 0, -inf}, "row_pad");  // 11x8
  ValueId p2 = b.maxpool2d(rows, 3, 2, 0, "pool2");       // 5x3
  ValueId p3 = b.maxpool2d(pad(c, {0, 0, 1, 1, 0.0f}, "zero_pad"), 3, 2, 0, "pool3");
  ValueId p4 = b.maxpool2d(pad(c, {1, 0, 0, 0, -inf}, "top_pad"), 3, 2, 0, "pool4");
  ValueId shared = pad(c, {0, 0, 1, 1, -inf}, "shared_pad");
  ValueId p5 = b.maxpool2d(shared, 3, 2, 0, "pool5");
  ValueId p6 = b.maxpool2d(pad(c, {0, 0, 1, 1, -inf}, "pad_padded"), 3, 2, 1, "pool6");
  std::vector<ValueId> parts;
  for (ValueId v : {p1, p2, p3, p4, p5, p6, shared}) parts.push_back(b.global_avgpool(v));
  b.output(b.linear(b.concat(parts, "features"), 5, "fc"));
  const Graph src = b.finish();
  ParameterSet params = weights_for(src, 4);
  const optimize::Rewritten r = optimize::fold_pad_into_pool(src, params);
  EXPECT_EQ(r.rewrites, 2);
  const auto& a1 = node_named(r.graph, "pool1").attr<Pool2dAttrs>();
  EXPECT_EQ(a1.end_pad.h, 1);
  EXPECT_EQ(a1.end_pad.w, 1);
  EXPECT_EQ(r.graph.value(node_named(r.graph, "pool1").outputs[0]).shape,
            (Shape{kBatchDim, 4, 5, 5}));
  const auto& a2 = node_named(r.graph, "pool2").attr<Pool2dAttrs>();
  EXPECT_EQ(a2.end_pad.h, 1);
  EXPECT_EQ(a2.end_pad.w, 0);
  EXPECT_EQ(r.graph.find_node("ceil_pad"), nullptr);
  for (const char* kept : {"zero_pad", "top_pad", "shared_pad", "pad_padded"})
    EXPECT_NE(r.graph.find_node(kept), nullptr) << kept;
  EXPECT_EQ(r.graph.value(node_named(r.graph, "pool2").outputs[0]).shape,
            (Shape{kBatchDim, 4, 5, 3}));
  expect_same_outputs(src, params, r, {2, 3, 10, 10}, 1e-6);
}

// PyTorch's avg_pool2d(x, 3, 1, 1), which it exports as a Pad of zeros and an AveragePool
// without padding (Inception-v3's pool branches), becomes an AvgPool2d that pads itself and
// counts the padding in its divisor: on a 10x10 input, 1 on every side (10x10 out) and 1 row,
// 0 columns (3x3 s2: 5x4). Left alone: a Pad not the same at both ends of an axis, a Pad of
// another value, a Pad wider than half a window, a Pad another node reads too, and an
// AvgPool2d that pads itself.
TEST(FoldPadIntoPool, ZerosBecomeAveragePoolingPadding) {
  GraphBuilder b("m");
  Graph& g = b.graph();
  ValueId x = b.input("x", {3, 10, 10});
  const auto pad = [&](ValueId v, PadAttrs p, const std::string& name) {
    return g.add_node(OpKind::Pad, name, p, {v});
  };
  ValueId c = b.conv2d(x, 4, 3, 1, 1, 1, true, "c");
  ValueId p1 = b.avgpool2d(pad(c, {1, 1, 1, 1, 0.0f}, "same_pad"), 3, 1, 0, "pool1");
  ValueId p2 = b.avgpool2d(pad(c, {1, 0, 1, 0, 0.0f}, "row_pad"), 3, 2, 0, "pool2");
  ValueId p3 = b.avgpool2d(pad(c, {0, 0, 1, 1, 0.0f}, "end_pad"), 3, 2, 0, "pool3");
  ValueId p4 = b.avgpool2d(pad(c, {1, 1, 1, 1, 1.0f}, "ones_pad"), 3, 1, 0, "pool4");
  ValueId p5 = b.avgpool2d(pad(c, {2, 2, 2, 2, 0.0f}, "wide_pad"), 3, 1, 0, "pool5");
  ValueId shared = pad(c, {1, 1, 1, 1, 0.0f}, "shared_pad");
  ValueId p6 = b.avgpool2d(shared, 3, 1, 0, "pool6");
  ValueId p7 = b.avgpool2d(pad(c, {1, 1, 1, 1, 0.0f}, "pad_padded"), 3, 1, 1, "pool7");
  std::vector<ValueId> parts;
  for (ValueId v : {p1, p2, p3, p4, p5, p6, p7, shared}) parts.push_back(b.global_avgpool(v));
  b.output(b.linear(b.concat(parts, "features"), 5, "fc"));
  const Graph src = b.finish();
  ParameterSet params = weights_for(src, 6);
  const optimize::Rewritten r = optimize::fold_pad_into_pool(src, params);
  EXPECT_EQ(r.rewrites, 2);
  const auto& a1 = node_named(r.graph, "pool1").attr<Pool2dAttrs>();
  EXPECT_EQ(a1.pad_h, 1);
  EXPECT_EQ(a1.pad_w, 1);
  EXPECT_TRUE(a1.count_include_pad);
  EXPECT_EQ(r.graph.value(node_named(r.graph, "pool1").outputs[0]).shape,
            (Shape{kBatchDim, 4, 10, 10}));
  const auto& a2 = node_named(r.graph, "pool2").attr<Pool2dAttrs>();
  EXPECT_EQ(a2.pad_h, 1);
  EXPECT_EQ(a2.pad_w, 0);
  EXPECT_EQ(r.graph.value(node_named(r.graph, "pool2").outputs[0]).shape,
            (Shape{kBatchDim, 4, 5, 4}));
  for (const char* gone : {"same_pad", "row_pad"})
    EXPECT_EQ(r.graph.find_node(gone), nullptr) << gone;
  for (const char* kept : {"end_pad", "ones_pad", "wide_pad", "shared_pad", "pad_padded"})
    EXPECT_NE(r.graph.find_node(kept), nullptr) << kept;
  expect_same_outputs(src, params, r, {2, 3, 10, 10}, 1e-6);
}

// PyTorch's nn.Linear over tokens, exported as MatMul and Add of the bias: the Add of a vector
// of out_features weights (either operand order) becomes the Linear's bias. Left alone: an Add
// of a [L, out] weight (not one per feature), a Linear that has a bias already, one whose
// output another node reads too, and a vector another node reads too. An Add that is the
// graph's output folds (the Linear's output is then the graph's).
TEST(FoldBiasAdd, AVectorAddedToALinearBecomesItsBias) {
  GraphBuilder b("m");
  Graph& g = b.graph();
  ValueId x = b.input("x", {3, 8});
  const auto param = [&](const std::string& name, Shape shape) {
    return g.add_parameter(name, std::move(shape), graph::Initializer::uniform(-1, 1));
  };
  ValueId y1 = b.add(b.linear(x, 6, "fc1", false), param("b1", {6}), "add1");
  ValueId y2 = b.add(param("b2", {6}), b.linear(y1, 6, "fc2", false), "add2");
  ValueId y3 = b.add(b.linear(y2, 6, "fc3", false), param("b3", {3, 6}), "add3");
  ValueId y4 = b.add(b.linear(y3, 6, "fc4", true), param("b4", {6}), "add4");
  ValueId shared = b.linear(y4, 6, "fc5", false);
  ValueId y5 = b.add(b.add(shared, param("b5", {6}), "add5"), shared, "twice");
  ValueId b6 = param("b6", {6});  // also read by the Mul after
  ValueId y6 = g.add_node(OpKind::Mul, "rescale", {},
                          {b.add(b.linear(y5, 6, "fc6", false), b6, "add6"), b6});
  b.output(b.linear(b.flatten(y6, "flat"), 4, "head"));
  b.output(b.add(b.linear(y6, 6, "fc7", false), param("b7", {6}), "add7"));  // a graph output
  const Graph src = b.finish();
  ParameterSet params = weights_for(src, 7);
  const optimize::Rewritten r = optimize::fold_bias_add(src, params);
  EXPECT_EQ(r.rewrites, 3);
  for (const char* folded : {"fc1", "fc2", "fc7"}) {
    EXPECT_TRUE(node_named(r.graph, folded).attr<LinearAttrs>().bias) << folded;
    EXPECT_EQ(node_named(r.graph, folded).inputs.size(), 3u) << folded;
  }
  for (const char* gone : {"add1", "add2", "add7"})
    EXPECT_EQ(r.graph.find_node(gone), nullptr) << gone;
  for (const char* kept : {"add3", "add4", "add5", "add6"})
    EXPECT_NE(r.graph.find_node(kept), nullptr) << kept;
  EXPECT_FALSE(node_named(r.graph, "fc3").attr<LinearAttrs>().bias);
  expect_same_outputs(src, params, r, {2, 3, 8}, 1e-6);
}

// A Mul of a Linear's output by one factor per output feature becomes part of the Linear:
// through a Transpose (ConvNeXt's layer scale, gamma[C, 1, 1] after the block is transposed back
// to NCHW) and directly (the operands swapped, a Linear without bias). Left alone: factors along
// another axis of the features' size (the image's height), a product something else reads too,
// and a Linear whose weights another Linear reads.
TEST(FoldScaleIntoLinear, OneFactorPerFeatureScalesTheLinearsRows) {
  GraphBuilder b("m");
  Graph& g = b.graph();
  ValueId x = b.input("x", {5, 4, 6});  // a channels-last 5 x 4 image of 6 channels
  const auto param = [&](const std::string& name, Shape shape) {
    return g.add_parameter(name, std::move(shape), Initializer::uniform(0.5f, 1.5f));
  };
  TransposeAttrs to_nchw;
  to_nchw.perm = {0, 3, 1, 2};
  const ValueId fc1 = b.linear(x, 5, "fc1");
  const ValueId m1 =
      g.add_node(OpKind::Mul, "scale1", {},
                 {g.add_node(OpKind::Transpose, "t1", to_nchw, {fc1}), param("gamma1", {5, 1, 1})});
  const ValueId m2 =
      g.add_node(OpKind::Mul, "scale2", {}, {param("gamma2", {5}), b.linear(x, 5, "fc2", false)});
  const ValueId m3 =
      g.add_node(OpKind::Mul, "scale3", {},
                 {g.add_node(OpKind::Transpose, "t3", to_nchw, {b.linear(x, 5, "fc3")}),
                  param("h3", {1, 5, 1})});
  const ValueId fc4 = b.linear(x, 5, "fc4");
  const ValueId m4 = g.add_node(OpKind::Mul, "scale4", {}, {fc4, param("gamma4", {5})});
  const ValueId nchw = b.add(m1, m3, "nchw");
  // fc5 shares its weights with fc6: scaling them would change fc6 too.
  const ValueId w5 = param("w5", {5, 6});
  const ValueId fc5 = g.add_node(OpKind::Linear, "fc5", LinearAttrs{6, 5, false, {}}, {x, w5});
  const ValueId fc6 = g.add_node(OpKind::Linear, "fc6", LinearAttrs{6, 5, false, {}}, {x, w5});
  const ValueId m5 = g.add_node(OpKind::Mul, "scale5", {}, {fc5, param("gamma5", {5})});
  const ValueId nhwc =
      b.add(b.add(m2, b.add(m4, fc4, "plus_fc4"), "sum24"), b.add(m5, fc6, "sum56"), "nhwc");
  b.output(b.linear(b.concat({b.flatten(nchw, "f1"), b.flatten(nhwc, "f2")}, "both"), 3, "head"));
  const Graph src = b.finish();
  ParameterSet params = weights_for(src, 4);
  const optimize::Rewritten r = optimize::fold_scale_into_linear(src, params);
  EXPECT_EQ(r.rewrites, 2);
  EXPECT_EQ(r.graph.find_node("scale1"), nullptr);
  EXPECT_EQ(r.graph.find_node("scale2"), nullptr);
  for (const char* kept : {"scale3", "scale4", "scale5"})
    EXPECT_EQ(node_named(r.graph, kept).kind, OpKind::Mul) << kept;
  // fc1's rows and bias by gamma1, element by element.
  const Node& fc1_now = node_named(r.graph, "fc1");
  const Tensor& w = params.at(src.find_node("fc1")->inputs.at(1));
  const Tensor& bias = params.at(src.find_node("fc1")->inputs.at(2));
  const Tensor& gamma = params.at(src.find_value("gamma1")->id);
  const Tensor& w_now = r.params.at(fc1_now.inputs.at(1));
  const Tensor& b_now = r.params.at(fc1_now.inputs.at(2));
  for (std::int64_t o = 0; o < 5; ++o) {
    EXPECT_FLOAT_EQ(b_now.f32()[o], bias.f32()[o] * gamma.f32()[o]) << o;
    for (std::int64_t k = 0; k < 6; ++k)
      EXPECT_FLOAT_EQ(w_now.f32()[o * 6 + k], w.f32()[o * 6 + k] * gamma.f32()[o]) << o << "," << k;
  }
  EXPECT_EQ(node_named(r.graph, "fc2").inputs.size(), 2u);  // still without bias
  expect_same_outputs(src, params, r, {2, 5, 4, 6}, 1e-5);
}

// DenseNet's pre-activation: a BatchNorm2d of a concatenation (no convolution to fold it into)
// takes the ReLU after it (oneDNN's fused ReLU); another activation after a BatchNorm stays.
TEST(FuseActivation, ABatchNormTakesAReLU) {
  GraphBuilder b("m");
  ValueId x = b.input("x", {3, 8, 8});
  ValueId c1 = b.conv2d(x, 4, 3, 1, 1, 1, true, "c1");
  ValueId cat = b.concat({x, c1}, "cat");
  ValueId h = b.relu(b.batchnorm2d(cat, "bn1"), "relu1");
  h = b.conv2d(h, 5, 1, 1, 0, 1, true, "c2");
  h = b.sigmoid(b.batchnorm2d(b.concat({h, cat}, "cat2"), "bn2"), "sig");
  b.output(b.linear(b.flatten(b.global_avgpool(h, "gap"), "flat"), 5, "fc"));
  const Graph g = b.finish();
  ParameterSet params = weights_for(g, 10);
  const optimize::Rewritten r = optimize::fuse_activation(g, params);
  EXPECT_EQ(r.rewrites, 1);
  EXPECT_EQ(node_named(r.graph, "bn1").attr<BatchNormAttrs>().post.activation, OpKind::ReLU);
  EXPECT_FALSE(node_named(r.graph, "bn2").attr<BatchNormAttrs>().post.any());
  EXPECT_EQ(r.graph.find_node("relu1"), nullptr);
  expect_same_outputs(g, params, r, {2, 3, 8, 8}, 1e-6);
}

// fold_batchnorm leaves a BatchNorm that carries a ReLU (folding it would lose the ReLU): an
// optimized graph optimized again (a quantized model's) keeps it.
TEST(FoldBatchNorm, LeavesABatchNormThatCarriesAReLU) {
  GraphBuilder b("m");
  Graph& g = b.graph();
  ValueId c = b.conv2d(b.input("x", {3, 8, 8}), 4, 3, 1, 1, 1, true, "c");
  BatchNormAttrs a;
  a.channels = 4;
  a.post.activation = OpKind::ReLU;
  b.output(g.add_node(OpKind::BatchNorm2d, "bn", a,
                      {c, g.add_parameter("bn.weight", {4}, Initializer::constant(1.0f)),
                       g.add_parameter("bn.bias", {4}, Initializer::constant(0.0f)),
                       g.add_buffer("bn.running_mean", {4}, Initializer::constant(0.0f)),
                       g.add_buffer("bn.running_var", {4}, Initializer::constant(1.0f))}));
  const Graph with_relu = b.finish();
  ParameterSet params = weights_for(with_relu, 3);
  EXPECT_EQ(optimize::fold_batchnorm(with_relu, params).rewrites, 0);
}

// PyTorch (opset 13) exports hardswish as x * HardSigmoid(x) (alpha 1/6, beta 1/2), either
// operand first, and SiLU as x * Sigmoid(x). Left alone: another gate (alpha 0.2), a gate read
// by another node too, and a gate of another value.
TEST(FuseGatedActivation, XTimesItsGateIsHardSwishOrSiLU) {
  GraphBuilder b("m");
  Graph& g = b.graph();
  ValueId x = b.input("x", {3, 8, 8});
  const auto hsig = [&](ValueId v, float alpha, const std::string& name) {
    return g.add_node(OpKind::HardSigmoid, name, EltwiseAttrs{alpha, 0.5f}, {v});
  };
  const auto mul = [&](ValueId a, ValueId c, const std::string& name) {
    return g.add_node(OpKind::Mul, name, {}, {a, c});
  };
  ValueId c1 = b.conv2d(x, 4, 3, 1, 1, 1, true, "c1");
  ValueId h = mul(c1, hsig(c1, 1.0f / 6.0f, "g1"), "swish1");
  ValueId c2 = b.conv2d(h, 4, 3, 1, 1, 1, true, "c2");
  h = mul(hsig(c2, 1.0f / 6.0f, "g2"), c2, "swish2");  // the gate first
  ValueId c3 = b.conv2d(h, 4, 3, 1, 1, 1, true, "c3");
  h = mul(c3, hsig(c3, 0.2f, "g3"), "other_gate");
  ValueId c4 = b.conv2d(h, 4, 3, 1, 1, 1, true, "c4");
  ValueId g4 = hsig(c4, 1.0f / 6.0f, "g4");
  h = b.add(mul(c4, g4, "gate_read_twice"), g4, "plus_gate");
  ValueId c5 = b.conv2d(h, 4, 3, 1, 1, 1, true, "c5");
  h = mul(c5, hsig(c4, 1.0f / 6.0f, "g5"), "gate_of_another");
  ValueId c6 = b.conv2d(h, 4, 3, 1, 1, 1, true, "c6");
  h = mul(c6, b.sigmoid(c6, "g6"), "silu");
  b.output(b.linear(b.flatten(b.global_avgpool(h, "gap"), "flat"), 5, "fc"));
  const Graph src = b.finish();
  ParameterSet params = weights_for(src, 9);
  const optimize::Rewritten r = optimize::fuse_gated_activation(src, params);
  EXPECT_EQ(r.rewrites, 3);
  EXPECT_EQ(node_named(r.graph, "swish1").kind, OpKind::HardSwish);
  EXPECT_EQ(node_named(r.graph, "silu").kind, OpKind::SiLU);
  EXPECT_EQ(node_named(r.graph, "swish2").kind, OpKind::HardSwish);
  EXPECT_EQ(r.graph.find_node("g1"), nullptr);
  EXPECT_EQ(node_named(r.graph, "other_gate").kind, OpKind::Mul);
  EXPECT_EQ(node_named(r.graph, "gate_read_twice").kind, OpKind::Mul);
  EXPECT_EQ(node_named(r.graph, "gate_of_another").kind, OpKind::Mul);
  expect_same_outputs(src, params, r, {2, 3, 8, 8}, 1e-6);
  // Compiled for inference, the convolutions take the HardSwish as their post-op.
  const optimize::InferenceGraph all = optimize::optimize_for_inference(src, params, {});
  EXPECT_EQ(node_named(all.graph, "c1").attr<Conv2dAttrs>().post.activation, OpKind::HardSwish);
  EXPECT_EQ(node_named(all.graph, "c2").attr<Conv2dAttrs>().post.activation, OpKind::HardSwish);
  EXPECT_EQ(node_named(all.graph, "c6").attr<Conv2dAttrs>().post.activation, OpKind::SiLU);
}

// GELU as PyTorch exports it: Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5), also with every
// commutative operand swapped. Left alone: a division by 2 (not sqrt 2), an Erf read twice, and
// a Div of another value than the one multiplied.
TEST(FuseGelu, PyTorchsFiveOpsBecomeOneGELU) {
  GraphBuilder b("m");
  Graph& g = b.graph();
  ValueId x = b.input("x", {3, 8, 8});
  const auto scalar = [&](const std::string& name, float v) {
    return g.add_buffer(name, {1}, Initializer::constant(v));
  };
  const auto op = [&](OpKind k, const std::string& name, std::vector<ValueId> in) {
    return g.add_node(k, name, {}, std::move(in));
  };
  // swapped: Add(1, erf), Mul(add, x), Mul(0.5, product); divisor: sqrt 2 or another.
  ValueId e = graph::kNoValue;  // the last GELU's Erf
  const auto gelu = [&](ValueId v, const std::string& p, bool swapped, float divisor,
                        ValueId divided) {
    e = op(OpKind::Erf, p + "erf",
           {op(OpKind::Div, p + "div", {divided, scalar(p + "s", divisor)})});
    const ValueId one = scalar(p + "one", 1.0f), half = scalar(p + "half", 0.5f);
    const ValueId plus =
        op(OpKind::Add, p + "add", swapped ? std::vector{one, e} : std::vector{e, one});
    const ValueId prod =
        op(OpKind::Mul, p + "mul", swapped ? std::vector{plus, v} : std::vector{v, plus});
    return op(OpKind::Mul, p + "gelu", swapped ? std::vector{half, prod} : std::vector{prod, half});
  };
  const float sqrt2 = std::sqrt(2.0f);
  ValueId c1 = b.conv2d(x, 4, 3, 1, 1, 1, true, "c1");
  ValueId h = gelu(c1, "a_", false, sqrt2, c1);
  ValueId c2 = b.conv2d(h, 4, 3, 1, 1, 1, true, "c2");
  h = gelu(c2, "b_", true, sqrt2, c2);
  ValueId c3 = b.conv2d(h, 4, 3, 1, 1, 1, true, "c3");
  h = gelu(c3, "c_", false, 2.0f, c3);
  ValueId c4 = b.conv2d(h, 4, 3, 1, 1, 1, true, "c4");
  h = gelu(c4, "d_", false, sqrt2, c4);
  h = b.add(h, e, "plus_erf");
  ValueId c5 = b.conv2d(h, 4, 3, 1, 1, 1, true, "c5");
  h = gelu(c5, "e_", false, sqrt2, c4);
  b.output(b.linear(b.flatten(b.global_avgpool(h, "gap"), "flat"), 5, "fc"));
  const Graph src = b.finish();
  ParameterSet params = weights_for(src, 9);
  const optimize::Rewritten r = optimize::fuse_gelu(src, params);
  EXPECT_EQ(r.rewrites, 2);
  EXPECT_EQ(node_named(r.graph, "a_gelu").kind, OpKind::GELU);
  EXPECT_EQ(node_named(r.graph, "b_gelu").kind, OpKind::GELU);
  EXPECT_EQ(r.graph.find_node("a_erf"), nullptr);
  EXPECT_EQ(r.graph.find_node("b_mul"), nullptr);
  for (const char* kept : {"c_gelu", "d_gelu", "e_gelu"})
    EXPECT_EQ(node_named(r.graph, kept).kind, OpKind::Mul) << kept;
  expect_same_outputs(src, params, r, {2, 3, 8, 8}, 1e-6);
  // Compiled for inference, the convolutions take the GELU as their post-op.
  const optimize::InferenceGraph all = optimize::optimize_for_inference(src, params, {});
  EXPECT_EQ(node_named(all.graph, "c1").attr<Conv2dAttrs>().post.activation, OpKind::GELU);
  EXPECT_EQ(node_named(all.graph, "c2").attr<Conv2dAttrs>().post.activation, OpKind::GELU);
}

// A layer norm over the tokens' features as PyTorch exports it before opset 17: d = x -
// ReduceMean(x), Div(d, Sqrt(Add(ReduceMean(Mul(d, d)), eps))) * scale + bias, the means over
// the last axis; also with every commutative operand swapped. Left alone: means over another
// axis, a difference something else reads too, and a scale that is not a weight.
TEST(FuseLayerNorm, PyTorchsNineOpsBecomeOneLayerNorm) {
  GraphBuilder b("m");
  Graph& g = b.graph();
  ValueId x = b.input("x", {5, 8});  // 5 tokens of 8 features
  const auto op = [&](OpKind k, const std::string& name, std::vector<ValueId> in,
                      Attrs attrs = {}) { return g.add_node(k, name, attrs, std::move(in)); };
  ValueId d = graph::kNoValue;  // the last norm's difference
  const auto norm = [&](ValueId v, const std::string& p, bool swapped, std::int64_t axis,
                        ValueId scale) {
    const ReduceAttrs over{axis};
    d = op(OpKind::Sub, p + "centre", {v, op(OpKind::ReduceMean, p + "mean", {v}, over)});
    const ValueId var =
        op(OpKind::ReduceMean, p + "variance", {op(OpKind::Mul, p + "square", {d, d})}, over);
    const ValueId eps = g.add_buffer(p + "eps", {1}, Initializer::constant(0.25f));
    const ValueId shifted =
        op(OpKind::Add, p + "plus_eps", swapped ? std::vector{eps, var} : std::vector{var, eps});
    const ValueId n = op(OpKind::Div, p + "normalise", {d, op(OpKind::Sqrt, p + "std", {shifted})});
    if (scale == graph::kNoValue)
      scale = g.add_parameter(p + "scale", {8}, Initializer::uniform(0.5f, 1.5f));
    const ValueId bias = g.add_parameter(p + "bias", {8}, Initializer::uniform(-0.5f, 0.5f));
    const ValueId scaled =
        op(OpKind::Mul, p + "scaled", swapped ? std::vector{scale, n} : std::vector{n, scale});
    return op(OpKind::Add, p + "norm",
              swapped ? std::vector{bias, scaled} : std::vector{scaled, bias});
  };
  ValueId h = norm(b.linear(x, 8, "fc0"), "a_", false, 2, graph::kNoValue);
  h = norm(b.linear(h, 8, "fc1"), "b_", true, 2, graph::kNoValue);
  h = norm(b.linear(h, 8, "fc2"), "c_", false, 1, graph::kNoValue);  // over the tokens
  h = norm(b.linear(h, 8, "fc3"), "d_", false, 2, graph::kNoValue);
  h = b.add(h, d, "plus_difference");
  ValueId fc4 = b.linear(h, 8, "fc4");
  h = norm(fc4, "e_", false, 2, b.linear(fc4, 8, "computed_scale"));
  b.output(b.linear(b.flatten(h, "flat"), 5, "fc"));
  const Graph src = b.finish();
  ParameterSet params = weights_for(src, 9);
  const optimize::Rewritten r = optimize::fuse_layer_norm(src, params);
  EXPECT_EQ(r.rewrites, 2);
  for (const char* fused : {"a_norm", "b_norm"}) {
    const Node& n = node_named(r.graph, fused);
    ASSERT_EQ(n.kind, OpKind::LayerNorm) << fused;
    EXPECT_EQ(n.attr<LayerNormAttrs>().features, 8);
    EXPECT_EQ(n.attr<LayerNormAttrs>().eps, 0.25f);
    EXPECT_EQ(r.graph.value(n.inputs.at(1)).name, std::string(fused).substr(0, 2) + "scale");
    EXPECT_EQ(r.graph.value(n.inputs.at(2)).name, std::string(fused).substr(0, 2) + "bias");
  }
  EXPECT_EQ(r.graph.find_node("a_mean"), nullptr);
  EXPECT_EQ(r.graph.find_node("b_std"), nullptr);
  for (const char* kept : {"c_norm", "d_norm", "e_norm"})
    EXPECT_EQ(node_named(r.graph, kept).kind, OpKind::Add) << kept;
  expect_same_outputs(src, params, r, {2, 5, 8}, 1e-5);
}

TEST(FuseActivation, ConvolutionsAndLinearsTakeTheirActivation) {
  GraphBuilder b("m");
  ValueId x = b.input("x", {3, 8, 8});
  ValueId h = b.relu6(b.conv2d(x, 4, 3, 1, 1, 1, true, "c1"));
  h = b.graph().add_node(OpKind::LeakyReLU, "leaky", EltwiseAttrs{0.1f, 0.0f},
                         {b.conv2d(h, 4, 3, 1, 1, 1, true, "c2")});
  h = b.graph().add_node(OpKind::HardSigmoid, "hsig", EltwiseAttrs{0.2f, 0.5f},
                         {b.conv2d(h, 4, 3, 1, 1, 1, true, "c3")});  // not fusible
  ValueId c4 = b.conv2d(h, 4, 3, 1, 1, 1, true, "c4");
  b.output(c4);  // a graph output: its activation stays apart
  h = b.sigmoid(c4);
  b.output(b.relu(b.linear(b.flatten(h), 5, "fc")));
  const Graph g = b.finish();
  ParameterSet params = weights_for(g, 8);
  const optimize::Rewritten r = optimize::fuse_activation(g, params);
  EXPECT_EQ(r.rewrites, 3);
  EXPECT_EQ(node_named(r.graph, "c1").attr<Conv2dAttrs>().post.activation, OpKind::ReLU6);
  const PostOps& leaky = node_named(r.graph, "c2").attr<Conv2dAttrs>().post;
  EXPECT_EQ(leaky.activation, OpKind::LeakyReLU);
  EXPECT_FLOAT_EQ(leaky.eltwise.alpha, 0.1f);
  EXPECT_FALSE(node_named(r.graph, "c3").attr<Conv2dAttrs>().post.any());
  EXPECT_FALSE(node_named(r.graph, "c4").attr<Conv2dAttrs>().post.any());
  EXPECT_EQ(node_named(r.graph, "fc").attr<LinearAttrs>().post.activation, OpKind::ReLU);
  expect_same_outputs(g, params, r, {2, 3, 8, 8}, 1e-6);
}

TEST(InferenceCompilation, TheSumAndTheActivationChainInOneConvolution) {
  const Graph g = residual_block(false);
  ParameterSet params = weights_for(g, 9);
  const optimize::InferenceGraph opt = optimize::optimize_for_inference(g, params);
  const PostOps& post = node_named(opt.graph, "conv2").attr<Conv2dAttrs>().post;
  EXPECT_TRUE(post.sum);
  EXPECT_EQ(post.activation, OpKind::ReLU);
  EXPECT_EQ(count_nodes(opt.graph, OpKind::ReLU), 0);
  ASSERT_EQ(opt.passes.size(), 11u);
  EXPECT_EQ(opt.passes[2].pass, "fold_bias_add");
  EXPECT_EQ(opt.passes[2].rewrites, 0);
  EXPECT_EQ(opt.passes[3].pass, "fold_scale_into_linear");
  EXPECT_EQ(opt.passes[3].rewrites, 0);
  EXPECT_EQ(opt.passes[4].pass, "schedule_shortcuts_first");
  EXPECT_EQ(opt.passes[4].rewrites, 0);
  EXPECT_EQ(opt.passes[5].pass, "fuse_residual_add");
  EXPECT_EQ(opt.passes[5].rewrites, 1);
  EXPECT_EQ(opt.passes[6].pass, "fuse_gated_activation");
  EXPECT_EQ(opt.passes[6].rewrites, 0);
  EXPECT_EQ(opt.passes[7].pass, "fuse_gelu");
  EXPECT_EQ(opt.passes[8].pass, "fuse_layer_norm");
  EXPECT_EQ(opt.passes[9].pass, "fold_pad_into_pool");
  EXPECT_EQ(opt.passes[10].pass, "fuse_activation");
  EXPECT_EQ(opt.passes[10].rewrites, 3);
}

// An inference plan's matmul reads a Linear's weights packed as oneDNN likes (from 8 rows up;
// plans of two batch sizes share them): packed again when the caller's parameters change.
TEST(InferenceCompilation, PackedLinearWeightsFollowParameterUpdates) {
  GraphBuilder b("m");
  ValueId x = b.input("x", {12});
  b.output(b.linear(b.relu(b.linear(x, 16, "fc1"), "r"), 5, "fc2"));
  const Graph g = b.finish();
  ParameterSet params = weights_for(g, 12);
  Rng rng(2);
  const Tensor in9 = ops::testing::uniform({9, 12}, rng),
               in16 = ops::testing::uniform({16, 12}, rng);
  auto exe = backend::compile_for_inference(backend::parse_backend_spec("cpu"), g, params);
  const auto expect_reference = [&] {
    for (const Tensor* in : {&in9, &in16}) {
      exe->forward(std::span<const Tensor>(in, 1), backend::Mode::Eval);
      EXPECT_LE(relative_difference(eval_output(g, params, *in), exe->output(0)), 1e-5)
          << in->dim(0) << " rows";
    }
  };
  expect_reference();
  for (float& v : params.at(node_named(g, "fc1").inputs[1]).span<float>()) v *= -1.5f;
  exe->parameters_updated();
  expect_reference();
}

// The executable of a model compiled for inference re-derives its folded weights when the
// caller's change, and runs evaluation-mode forward passes only.

TEST(InferenceCompilation, FollowsParameterUpdatesAndRefusesTraining) {
  GraphBuilder b("m");
  ValueId x = b.input("x", {3, 6, 6});
  b.output(b.relu(b.batchnorm2d(b.conv2d(x, 4, 3, 1, 1, 1, false, "conv"), "bn")));
  const Graph g = b.finish();
  ParameterSet params = weights_for(g, 10);
  Rng rng(1);
  const Tensor in = ops::testing::uniform({2, 3, 6, 6}, rng);
  auto exe = backend::compile_for_inference(backend::parse_backend_spec("cpu"), g, params);
  EXPECT_EQ(count_nodes(exe->graph(), OpKind::BatchNorm2d), 0);
  exe->forward(std::span<const Tensor>(&in, 1), backend::Mode::Eval);
  EXPECT_LE(relative_difference(eval_output(g, params, in), exe->output(0)), 1e-5);
  for (float& v : params.at(node_named(g, "bn").inputs[1]).span<float>()) v *= -2.0f;
  exe->parameters_updated();
  exe->forward(std::span<const Tensor>(&in, 1), backend::Mode::Eval);
  EXPECT_LE(relative_difference(eval_output(g, params, in), exe->output(0)), 1e-5);
  EXPECT_THROW(exe->forward(std::span<const Tensor>(&in, 1), backend::Mode::Train), Error);
}

}  // namespace
