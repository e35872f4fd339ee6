// Inference compilation on every zoo model: the optimized graph's outputs equal the graph as
// built within 1e-5 of the largest output (random weights, non-trivial BatchNorm statistics),
// on oneDNN, and the passes did what they are for (no BatchNorm, Dropout or residual Add left
// where each can go).
#include <gtest/gtest.h>

#include "../ops/test_util.hpp"
#include "backend/inference.hpp"
#include "graph/zoo/zoo.hpp"
#include "optimize/inference.hpp"
#include "optimize_test_util.hpp"

using namespace telar;
using namespace telar::graph;
using optimize::testing::count_nodes;
using optimize::testing::eval_output;
using optimize::testing::relative_difference;
using optimize::testing::weights_for;
using optimize::testing::zoo_case_name;

namespace {

using Case = optimize::testing::ZooCase;

class ZooInference : public ::testing::TestWithParam<Case> {};

TEST_P(ZooInference, EqualsTheGraphAsBuilt) {
  const Case& c = GetParam();
  zoo::ModelOptions options;
  options.input = c.input;
  const Graph g = zoo::build(c.model, options);
  ParameterSet params = weights_for(g, 11);
  Rng rng(2);
  Shape batch_shape = c.input;
  batch_shape.insert(batch_shape.begin(), 2);
  const Tensor x = ops::testing::uniform(batch_shape, rng);
  const Tensor want = eval_output(g, params, x);
  auto exe = backend::compile_for_inference(backend::parse_backend_spec("cpu"), g, params);
  exe->forward(std::span<const Tensor>(&x, 1), backend::Mode::Eval);
  EXPECT_LE(relative_difference(want, exe->output(0)), 1e-5);
  const Graph& opt = exe->graph();
  EXPECT_EQ(count_nodes(opt, OpKind::BatchNorm2d), 0);
  EXPECT_EQ(count_nodes(opt, OpKind::Dropout), 0);
  EXPECT_EQ(count_nodes(opt, OpKind::Add), 0);
  EXPECT_LT(opt.nodes().size(), g.nodes().size());
}

INSTANTIATE_TEST_SUITE_P(
    Models, ZooInference,
    ::testing::Values(Case{"mlp:784-256-128-10", {784}}, Case{"mnist_cnn", {1, 28, 28}},
                      Case{"alexnet", {3, 96, 96}}, Case{"mobilenet_v1", {3, 64, 64}},
                      Case{"mobilenet_v1:0.5", {3, 32, 32}}, Case{"resnet18", {3, 64, 64}},
                      Case{"resnet34", {3, 64, 64}}),
    zoo_case_name);

// Every BatchNorm of ResNet-18 folds (20), no bias or scale folds into its Linear, its 3
// projection shortcuts run before their main path's last convolution, all 8 residual Adds fuse,
// no gated activation, layer norm or padded max pooling is found, and all 17 ReLUs fuse.
TEST(ZooInference, ResNet18PassCounts) {
  zoo::ModelOptions options;
  options.input = Shape{3, 64, 64};
  const Graph g = zoo::build("resnet18", options);
  const ParameterSet params = weights_for(g, 1);
  const optimize::InferenceGraph opt = optimize::optimize_for_inference(g, params);
  ASSERT_EQ(opt.passes.size(), 11u);
  EXPECT_EQ(opt.passes[1].rewrites, count_nodes(g, OpKind::BatchNorm2d));
  EXPECT_EQ(opt.passes[1].rewrites, 20);
  EXPECT_EQ(opt.passes[2].pass, "fold_bias_add");
  EXPECT_EQ(opt.passes[2].rewrites, 0);
  EXPECT_EQ(opt.passes[3].pass, "fold_scale_into_linear");
  EXPECT_EQ(opt.passes[3].rewrites, 0);
  EXPECT_EQ(opt.passes[4].rewrites, 3);
  EXPECT_EQ(opt.passes[5].rewrites, 8);
  EXPECT_EQ(opt.passes[6].rewrites, 0);
  EXPECT_EQ(opt.passes[7].rewrites, 0);
  EXPECT_EQ(opt.passes[8].rewrites, 0);
  EXPECT_EQ(opt.passes[9].rewrites, 0);
  EXPECT_EQ(opt.passes[10].pass, "fuse_activation");
  EXPECT_EQ(opt.passes[10].rewrites, count_nodes(g, OpKind::ReLU));
  for (const char* conv : {"layer2.0.conv2", "layer3.0.conv2", "layer4.0.conv2"})
    EXPECT_TRUE(opt.graph.find_node(conv)->attr<Conv2dAttrs>().post.sum) << conv;
}

}  // namespace
