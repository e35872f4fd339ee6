#include <gtest/gtest.h>

#include "core/error.hpp"
#include "graph/builder.hpp"
#include "graph/cost.hpp"
#include "graph/dump.hpp"
#include "graph/parameters.hpp"

using namespace telar;
using namespace telar::graph;

TEST(Graph, ShapeInferenceThroughConvPoolLinear) {
  GraphBuilder b("t");
  ValueId x = b.input("x", {3, 32, 32});
  x = b.conv2d(x, 8, 3, 2, 1);                // (32 + 2 - 3) / 2 + 1 = 16
  EXPECT_EQ(b.shape(x), (Shape{kBatchDim, 8, 16, 16}));
  x = b.maxpool2d(x, 3, 2, 1);                // (16 + 2 - 3) / 2 + 1 = 8
  EXPECT_EQ(b.shape(x), (Shape{kBatchDim, 8, 8, 8}));
  x = b.conv2d(x, 8, 3, 1, 2, 8, true, "dil", 2);  // depthwise, dilation 2: 8 + 4 - 5 + 1 = 8
  EXPECT_EQ(b.shape(x), (Shape{kBatchDim, 8, 8, 8}));
  x = b.flatten(x);
  EXPECT_EQ(b.shape(x), (Shape{kBatchDim, 512}));
  x = b.linear(x, 10);
  EXPECT_EQ(b.shape(x), (Shape{kBatchDim, 10}));
}

TEST(Graph, LinearWidthMismatchIsAClearError) {
  GraphBuilder b("t");
  ValueId x = b.input("x", {100});
  try {
    b.linear(x, 10, "fc1", true, 128);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("fc1"), std::string::npos);
    EXPECT_NE(msg.find("100"), std::string::npos);
    EXPECT_NE(msg.find("128"), std::string::npos);
  }
  // An image given to a Linear without a Flatten: the hint names it.
  ValueId image = b.input("image", {3, 8, 8});
  try {
    b.linear(image, 10, "fc2", true, 192);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Flatten an image"), std::string::npos) << e.what();
  }
}

TEST(Graph, InteractionWidthIsDensePlusPairs) {
  GraphBuilder b("dlrm");
  ValueId dense = b.input("dense", {32});
  std::vector<ValueId> embs;
  for (int t = 0; t < 4; ++t) embs.push_back(b.input("e" + std::to_string(t), {32}));
  ValueId z = b.dot_interaction(dense, embs);
  EXPECT_EQ(b.shape(z)[1], 42);  // DLRM prints Top MLP - [42 ...] for 4 tables, d = 32
  ValueId zs = b.dot_interaction(dense, embs, true, "self");
  EXPECT_EQ(b.shape(zs)[1], 32 + 15);
}

TEST(Graph, CostOfLinearAndConv) {
  GraphBuilder b("t");
  ValueId x = b.input("x", {1, 28, 28});
  ValueId c = b.conv2d(x, 32, 5, 1, 2, 1, true, "conv");
  b.linear(b.flatten(c), 10, "fc");
  Graph g = b.finish();
  auto conv = node_cost(g, *g.find_node("conv"), {2, 1.0});
  EXPECT_EQ(conv.macs, 2LL * 32 * 28 * 28 * 25);
  EXPECT_EQ(conv.param_bytes, (32 * 25 + 32) * 4);
  auto fc = node_cost(g, *g.find_node("fc"), {2, 1.0});
  EXPECT_EQ(fc.macs, 2LL * 32 * 28 * 28 * 10);
  EXPECT_EQ(fc.output_bytes, 2 * 10 * 4);
}

TEST(Graph, ParametersInitializeDeterministicallyWithinBounds) {
  GraphBuilder b("t");
  ValueId x = b.input("x", {16});
  b.output(b.linear(x, 4, "fc"));
  Graph g = b.finish();
  auto p1 = ParameterSet::initialize(g, 3);
  auto p2 = ParameterSet::initialize(g, 3);
  const Tensor& w = p1.at(g.value_id("fc.weight"));
  for (int i = 0; i < w.numel(); ++i) {
    EXPECT_EQ(w.f32()[i], p2.at(g.value_id("fc.weight")).f32()[i]);
    EXPECT_LE(std::abs(w.f32()[i]), 0.25f);  // 1/sqrt(16)
  }
}

TEST(Graph, DumpNamesEveryNode) {
  GraphBuilder b("t");
  ValueId x = b.input("x", {8});
  b.output(b.relu(b.linear(x, 4, "fc"), "act"));
  std::string text = dump(b.finish());
  EXPECT_NE(text.find("fc"), std::string::npos);
  EXPECT_NE(text.find("ReLU"), std::string::npos);
  EXPECT_NE(text.find("36 parameters"), std::string::npos);
}

TEST(Graph, DuplicateNamesAreRejected) {
  GraphBuilder b("t");
  ValueId x = b.input("x", {8});
  b.relu(x, "r");
  EXPECT_THROW(b.relu(x, "r"), Error);
}
