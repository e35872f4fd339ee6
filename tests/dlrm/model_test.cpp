// The DLRM graph: node names and components, shapes worked out by hand, DLRM's initialisers,
// and the interaction's order (DLRM's li/lj loops) checked through the whole model against a
// hand computation.
#include "dlrm/model.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "dlrm/executor.hpp"
#include "graph/cost.hpp"
#include "graph/parameters.hpp"

using namespace telar;
using namespace telar::dlrm;

TEST(DlrmModel, FullGraphShapesAndComponentsByHand) {
  const DlrmConfig c = make_config(8, "100-200-300", "13-16-8", "32-1", "dot", false);
  const graph::Graph g = build_graph(c);
  // bot/fc1 [13->16], bot/relu1, bot/fc2 [16->8], bot/relu2, emb/0..2, interaction,
  // top/fc1 [(3*4/2 + 8) = 14 -> 32], top/relu1, top/fc2 [32 -> 1], top/sigmoid.
  std::vector<std::string> names;
  for (const auto& n : g.nodes()) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"emb/0", "emb/1", "emb/2", "bot/fc1", "bot/relu1",
                                             "bot/fc2", "bot/relu2", "interaction", "top/fc1",
                                             "top/relu1", "top/fc2", "top/sigmoid"}));
  EXPECT_EQ(component_of(*g.find_node("emb/1")), Component::EmbeddingBags);
  EXPECT_EQ(component_of(*g.find_node("bot/relu2")), Component::BottomMlp);
  EXPECT_EQ(component_of(*g.find_node("interaction")), Component::Interaction);
  EXPECT_EQ(component_of(*g.find_node("top/sigmoid")), Component::TopMlp);
  EXPECT_EQ(g.value(g.value_id("emb/2.weight")).shape, (Shape{300, 8}));
  EXPECT_EQ(g.value(g.value_id("top/fc1.weight")).shape, (Shape{32, 14}));
  EXPECT_EQ(g.value(g.value_id("interaction.out")).shape, (Shape{kBatchDim, 14}));
  EXPECT_EQ(g.value(g.outputs()[0]).shape, (Shape{kBatchDim, 1}));
  EXPECT_EQ(g.inputs().size(), 1u + 2u * 3u);  // dense, indices/t and offsets/t
  EXPECT_EQ(graph::node_lowering(*g.find_node("emb/0")), graph::Lowering::SparseDense);
  EXPECT_EQ(graph::node_lowering(*g.find_node("top/fc2")), graph::Lowering::Gemm);
}

TEST(DlrmModel, DenseVariantTakesTheTableOutputsAsInputs) {
  const DlrmConfig c = make_config(4, "10-10", "3-4", "1", "cat", false);
  const graph::Graph g = build_training_graph(c, LossFunction::Bce);
  // Inputs: dense [B,3], emb/0.out [B,4], emb/1.out [B,4], target [B,1]; the cat interaction
  // gives 3 x 4 = 12; bce ends at the logit (no sigmoid node).
  ASSERT_EQ(g.inputs().size(), 4u);
  EXPECT_EQ(g.value(g.inputs()[1]).name, "emb/0.out");
  EXPECT_EQ(g.value(g.inputs()[2]).shape, (Shape{kBatchDim, 4}));
  EXPECT_EQ(g.value(g.value_id("interaction.out")).shape, (Shape{kBatchDim, 12}));
  EXPECT_EQ(g.find_node("top/sigmoid"), nullptr);
  EXPECT_EQ(component_of(*g.find_node("loss")), Component::Loss);
  EXPECT_NE(build_training_graph(c, LossFunction::Mse).find_node("top/sigmoid"), nullptr);
}

TEST(DlrmModel, LinearLayersCarryDlrmsInitialisation) {
  // W ~ N(0, sqrt(2/(m+n))), b ~ N(0, sqrt(1/m)): for 400 -> 200, std 0.0577 and 0.0707.
  const DlrmConfig c = make_config(200, "10", "400-200", "1", "dot", false);
  const graph::Graph g = build_training_graph(c, LossFunction::Mse);
  const graph::ParameterSet p = graph::ParameterSet::initialize(g, 3);
  auto stddev = [](const Tensor& t) {
    double s = 0, s2 = 0;
    for (float v : t.span<float>()) s += v, s2 += static_cast<double>(v) * v;
    const double n = static_cast<double>(t.numel());
    return std::sqrt(s2 / n - (s / n) * (s / n));
  };
  EXPECT_NEAR(stddev(p.at(g.value_id("bot/fc1.weight"))), std::sqrt(2.0 / 600.0), 0.002);
  EXPECT_NEAR(stddev(p.at(g.value_id("bot/fc1.bias"))), std::sqrt(1.0 / 200.0), 0.012);
}

TEST(DlrmModel, InteractionOrderThroughTheWholeModel) {
  // d = 2, two tables, the bottom MLP the identity (one width), top = one Linear to 1: the
  // model is sigmoid(w . R + b) with R = [x0, x1, z10, z20, z21], z_ij = S_i . S_j, S_0 = x,
  // S_1 = bag sum of table 0, S_2 = bag sum of table 1 (DLRM's li/lj order: i = 1, j = 0;
  // i = 2, j = 0; i = 2, j = 1). One-hot w reads each position of R in turn.
  const DlrmConfig c = make_config(2, "6-7", "2", "1", "dot", false);
  DlrmModel model(c, StorageKind::Memory, 9);
  CpuExecutor exe(model, backend::parse_backend_spec("cpu"), {LossFunction::Mse, 1});
  DlrmBatch batch;
  batch.dense = Tensor::from(std::vector<float>{0.5f, -1.25f}, {1, 2});
  batch.target = Tensor({1, 1});
  batch.indices = {Tensor({2}, DType::I64), Tensor({1}, DType::I64)};
  batch.offsets = {Tensor({1}, DType::I64), Tensor({1}, DType::I64)};
  batch.indices[0].data<std::int64_t>()[0] = 1;
  batch.indices[0].data<std::int64_t>()[1] = 4;
  batch.indices[1].data<std::int64_t>()[0] = 6;
  float r1[2], r4[2], r6[2];
  model.tables[0].read_row(1, r1);
  model.tables[0].read_row(4, r4);
  model.tables[1].read_row(6, r6);
  const double s0[2] = {0.5, -1.25}, s1[2] = {r1[0] + r4[0], r1[1] + r4[1]}, s2[2] = {r6[0], r6[1]};
  auto dot = [](const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1]; };
  const double expected_r[5] = {s0[0], s0[1], dot(s1, s0), dot(s2, s0), dot(s2, s1)};
  const graph::ValueId w = exe.training_graph().value_id("top/fc1.weight");
  const graph::ValueId b = exe.training_graph().value_id("top/fc1.bias");
  ASSERT_EQ(exe.parameters().at(w).numel(), 5);
  for (int k = 0; k < 5; ++k) {
    exe.parameters().at(w).zero();
    exe.parameters().at(w).f32()[k] = 1.0f;
    exe.parameters().at(b).zero();
    exe.parameters_changed();
    exe.forward(batch, false);
    const double p = exe.probabilities().f32()[0];
    EXPECT_NEAR(std::log(p / (1 - p)), expected_r[k], 1e-5) << "position " << k;
  }
}
