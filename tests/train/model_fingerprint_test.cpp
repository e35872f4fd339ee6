#include "train/model_fingerprint.hpp"

#include <gtest/gtest.h>

#include "graph/builder.hpp"
#include "graph/zoo/zoo.hpp"

using namespace telar;
using namespace telar::train;
using graph::ValueId;

namespace {
graph::Graph mlp(std::int64_t hidden, const std::string& name = "mlp", float dropout = 0.1f) {
  graph::GraphBuilder b(name);
  ValueId x = b.input("x", {8});
  b.output(b.linear(b.dropout(b.relu(b.linear(x, hidden, "fc1")), dropout), 3, "fc2"));
  return b.finish();
}
}  // namespace

TEST(ModelFingerprint, SameStructureSameFingerprint) {
  EXPECT_EQ(model_fingerprint(mlp(16)), model_fingerprint(mlp(16)));
  // The graph name is reported beside the fingerprint, not part of it.
  EXPECT_EQ(model_fingerprint(mlp(16, "a")), model_fingerprint(mlp(16, "b")));
}

TEST(ModelFingerprint, AnyStructuralChangeChangesIt) {
  const std::uint64_t base = model_fingerprint(mlp(16));
  EXPECT_NE(model_fingerprint(mlp(17)), base);               // a parameter shape
  EXPECT_NE(model_fingerprint(mlp(16, "mlp", 0.2f)), base);  // an attribute
  graph::GraphBuilder b("mlp");
  ValueId x = b.input("x", {8});
  b.output(b.linear(b.dropout(b.relu(b.linear(x, 16, "hidden")), 0.1f), 3, "fc2"));
  EXPECT_NE(model_fingerprint(b.finish()), base);  // a parameter name
  graph::GraphBuilder t("mlp");
  ValueId y = t.input("x", {8});
  t.output(t.linear(t.dropout(t.tanh(t.linear(y, 16, "fc1")), 0.1f), 3, "fc2"));
  EXPECT_NE(model_fingerprint(t.finish()), base);  // an op kind
}

// The hash is part of the checkpoint format: it must not change between builds or releases.
// This pins the value for one small graph, so any change to the encoding shows up here (and
// then needs a new checkpoint format version).
TEST(ModelFingerprint, PinnedValue) {
  EXPECT_EQ(fingerprint_str(model_fingerprint(mlp(16))), "0x78ddcb31d215c00b");
}

// The same for models whose nodes carry every kind of attribute field (integers, floats, flags:
// convolutions, batch norms, pools), as computed before the attributes were hashed through
// their fields() lists.
TEST(ModelFingerprint, PinnedValuesOfZooModels) {
  EXPECT_EQ(fingerprint_str(model_fingerprint(graph::zoo::build("mnist_cnn"))),
            "0x6174238c619b7950");
  EXPECT_EQ(fingerprint_str(model_fingerprint(graph::zoo::build("resnet18"))),
            "0x61ada7a82d88be19");
  EXPECT_EQ(fingerprint_str(model_fingerprint(graph::zoo::build("mobilenet_v1:0.5"))),
            "0x7af37a00ceac44cd");
}

// Attributes that leave every shape as it is still tell models apart: on a 10x10 input a 3x3
// convolution of stride 5 gives 2x2, and so do stride 4, padding 1 and dilation 2.
TEST(ModelFingerprint, AttributesCountWhereShapesAgree) {
  const auto conv = [](std::int64_t stride, std::int64_t pad, std::int64_t dilation) {
    graph::GraphBuilder b("conv");
    ValueId x = b.input("x", {4, 10, 10});
    ValueId y = b.conv2d(x, 8, 3, stride, pad, 1, true, "c", dilation);
    EXPECT_EQ(b.shape(y), (Shape{kBatchDim, 8, 2, 2}));
    b.output(y);
    return model_fingerprint(b.finish());
  };
  const std::uint64_t base = conv(5, 0, 1);
  EXPECT_NE(conv(4, 0, 1), base);
  EXPECT_NE(conv(5, 1, 1), base);
  EXPECT_NE(conv(5, 0, 2), base);
  const auto pool = [](graph::OpKind kind, bool count_include_pad, std::int64_t end_pad) {
    graph::GraphBuilder b("pool");
    ValueId x = b.input("x", {4, 10, 10});
    graph::Pool2dAttrs a;
    a.kernel_h = a.kernel_w = 3;
    a.pad_h = a.pad_w = 1;
    a.count_include_pad = count_include_pad;
    a.end_pad.h = end_pad;
    b.output(b.graph().add_node(kind, "p", a, {x}));
    return model_fingerprint(b.finish());
  };
  EXPECT_NE(pool(graph::OpKind::AvgPool2d, true, 0), pool(graph::OpKind::AvgPool2d, false, 0));
  EXPECT_NE(pool(graph::OpKind::MaxPool2d, true, 0), pool(graph::OpKind::MaxPool2d, true, 1));
  // Rows 0 and 2, or 0 and 3, of [0, 4): a Slice's step.
  const auto slice = [](std::int64_t step) {
    graph::GraphBuilder b("slice");
    ValueId x = b.input("x", {4, 10, 10});
    b.output(
        b.graph().add_node(graph::OpKind::Slice, "s", graph::SliceAttrs{2, 0, 4, {step}}, {x}));
    return model_fingerprint(b.finish());
  };
  EXPECT_NE(slice(2), slice(3));
}

TEST(ModelFingerprint, FormatsAsSixteenHexDigits) {
  EXPECT_EQ(fingerprint_str(0x1234), "0x0000000000001234");
}

TEST(ModelFingerprint, ZooModelsAreToldApart) {
  const std::uint64_t cnn = model_fingerprint(graph::zoo::build("mnist_cnn"));
  EXPECT_EQ(model_fingerprint(graph::zoo::build("mnist_cnn")), cnn);
  EXPECT_NE(model_fingerprint(graph::zoo::build("mlp:784-256-128-10")), cnn);
  EXPECT_NE(model_fingerprint(graph::zoo::build("mlp:784-256-128-10")),
            model_fingerprint(graph::zoo::build("mlp:784-128-10")));
  EXPECT_NE(
      model_fingerprint(graph::zoo::build("mnist_cnn", {.input = std::nullopt, .classes = 9})),
      cnn);
}
