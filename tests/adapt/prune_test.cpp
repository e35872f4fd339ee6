// Channel groups and structured pruning: the groups of small graphs written out by hand (a
// residual Add couples its layers, a Concat places channels at offsets, a Flatten spreads them,
// the output layer and anything coupled to the input stay), the weights of a pruned model
// element by element and its parameter count derived by hand, and on every zoo model: removing
// channels whose weights are all zero leaves the outputs unchanged.
#include "adapt/prune.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "../ops/test_util.hpp"
#include "../optimize/optimize_test_util.hpp"
#include "adapt/channel_groups.hpp"
#include "core/error.hpp"
#include "graph/builder.hpp"
#include "graph/zoo/zoo.hpp"
#include "prune_test_util.hpp"
#include "train/model_fingerprint.hpp"

using namespace telar;
using namespace telar::graph;
using adapt::ChannelGroups;
using adapt::testing::zero_removed_channels;
using optimize::testing::eval_output;
using optimize::testing::relative_difference;
using optimize::testing::weights_for;
using optimize::testing::zoo_case_name;

namespace {

// The group whose first layer is `node`; -1 if none.
int group_named(const Graph& g, const ChannelGroups& groups, const std::string& node) {
  return groups.group_of_node(g.find_node(node)->id);
}

std::vector<std::string> source_names(const Graph& g, const adapt::ChannelGroup& group) {
  std::vector<std::string> out;
  for (NodeId n : group.sources) out.push_back(g.node(n).name);
  return out;
}

float at(const ParameterSet& p, const Graph& g, const std::string& name, std::int64_t i) {
  return p.at(g.value_id(name)).f32()[i];
}

// conv c1 (2->4, 1x1) -> BN -> ReLU -> conv c2 (4->3, 3x3 p1, no bias) -> Flatten [27]
// -> fc1 (27->5) -> fc2 (5->2), the output.
Graph small_cnn() {
  GraphBuilder b("small");
  ValueId x = b.input("x", {2, 3, 3});
  x = b.conv2d(x, 4, 1, 1, 0, 1, true, "c1");
  x = b.batchnorm2d(x, "bn1");
  x = b.relu(x);
  x = b.conv2d(x, 3, 3, 1, 1, 1, false, "c2");
  x = b.flatten(x);
  x = b.linear(x, 5, "fc1");
  b.output(b.linear(x, 2, "fc2"));
  return b.finish();
}

TEST(ChannelGroups, EachLayerIsAGroupAndTheOutputLayerIsNotPrunable) {
  const Graph g = small_cnn();
  const ChannelGroups groups(g);
  ASSERT_EQ(groups.groups().size(), 4u);
  for (const char* name : {"c1", "c2", "fc1"}) {
    const int i = group_named(g, groups, name);
    ASSERT_GE(i, 0) << name;
    EXPECT_EQ(source_names(g, groups.groups()[i]), std::vector<std::string>{name});
    EXPECT_TRUE(groups.groups()[i].blocked.empty()) << name << ": " << groups.groups()[i].blocked;
  }
  const auto& fc2 = groups.groups()[group_named(g, groups, "fc2")];
  EXPECT_NE(fc2.blocked.find("output"), std::string::npos) << fc2.blocked;
  EXPECT_EQ(groups.prunable().size(), 3u);
  EXPECT_EQ(groups.groups()[group_named(g, groups, "c1")].channels, 4);
  EXPECT_EQ(groups.groups()[group_named(g, groups, "fc1")].channels, 5);
}

TEST(PruneChannels, EveryWeightLosesExactlyTheChannelsRemovedAndTheCountDropsByHand) {
  const Graph g = small_cnn();
  const ParameterSet params = weights_for(g, 3);
  const ChannelGroups groups(g);
  // Parameters by hand: c1 4*2 + 4, bn1 gamma and beta 2*4, c2 3*4*9, fc1 5*27 + 5, fc2 2*5 + 2.
  ASSERT_EQ(g.parameter_count(), 12 + 8 + 108 + 140 + 12);
  const adapt::PrunedModel p = adapt::prune_channels(g, params,
                                                     {{group_named(g, groups, "c1"), {1, 3}},
                                                      {group_named(g, groups, "c2"), {0, 2}},
                                                      {group_named(g, groups, "fc1"), {4}}});
  // c1 2*2 + 2, bn1 2*2, c2 2*2*9, fc1 1*18 + 1, fc2 2*1 + 2.
  EXPECT_EQ(p.graph.parameter_count(), 6 + 4 + 36 + 19 + 4);
  EXPECT_EQ(p.graph.value(p.graph.find_node("fc2")->outputs[0]).shape, (Shape{kBatchDim, 2}));

  // c1.weight [4,2,1,1] keeps rows 1 and 3.
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c)
      EXPECT_EQ(at(p.params, p.graph, "c1.weight", r * 2 + c),
                at(params, g, "c1.weight", (r == 0 ? 1 : 3) * 2 + c));
  EXPECT_EQ(at(p.params, p.graph, "c1.bias", 1), at(params, g, "c1.bias", 3));
  for (const char* bn : {"bn1.weight", "bn1.bias", "bn1.running_mean", "bn1.running_var"}) {
    ASSERT_EQ(p.params.at(p.graph.value_id(bn)).numel(), 2) << bn;
    EXPECT_EQ(at(p.params, p.graph, bn, 0), at(params, g, bn, 1)) << bn;
    EXPECT_EQ(at(p.params, p.graph, bn, 1), at(params, g, bn, 3)) << bn;
  }
  // c2.weight [3,4,3,3] keeps filters 0 and 2 and, of each, input channels 1 and 3.
  EXPECT_EQ(p.params.at(p.graph.value_id("c2.weight")).shape(), (Shape{2, 2, 3, 3}));
  for (int k = 0; k < 9; ++k) {
    EXPECT_EQ(at(p.params, p.graph, "c2.weight", 0 * 18 + 0 * 9 + k),
              at(params, g, "c2.weight", 0 * 36 + 1 * 9 + k));
    EXPECT_EQ(at(p.params, p.graph, "c2.weight", 1 * 18 + 1 * 9 + k),
              at(params, g, "c2.weight", 2 * 36 + 3 * 9 + k));
  }
  // fc1.weight [5,27] keeps row 4 and, after the Flatten, features 0..8 (channel 0) and
  // 18..26 (channel 2).
  EXPECT_EQ(p.params.at(p.graph.value_id("fc1.weight")).shape(), (Shape{1, 18}));
  for (int f = 0; f < 9; ++f) {
    EXPECT_EQ(at(p.params, p.graph, "fc1.weight", f), at(params, g, "fc1.weight", 4 * 27 + f));
    EXPECT_EQ(at(p.params, p.graph, "fc1.weight", 9 + f),
              at(params, g, "fc1.weight", 4 * 27 + 18 + f));
  }
  // fc2.weight [2,5] keeps column 4; its bias all.
  EXPECT_EQ(at(p.params, p.graph, "fc2.weight", 0), at(params, g, "fc2.weight", 4));
  EXPECT_EQ(at(p.params, p.graph, "fc2.weight", 1), at(params, g, "fc2.weight", 9));
  EXPECT_EQ(p.params.at(p.graph.value_id("fc2.bias")).numel(), 2);
  // Parameters keep their kinds: running statistics stay buffers.
  EXPECT_EQ(p.graph.find_value("bn1.running_mean")->kind, ValueKind::Buffer);
}

TEST(ChannelGroups, AResidualAddPrunesItsLayersTogether) {
  GraphBuilder b("residual");
  ValueId x = b.input("x", {3, 6, 6});
  const ValueId a = b.relu(b.conv2d(x, 4, 3, 1, 1, 1, true, "stem"));
  ValueId y = b.batchnorm2d(b.conv2d(a, 4, 3, 1, 1, 1, false, "branch"), "bn");
  y = b.relu(b.add(y, a));
  y = b.global_avgpool(b.conv2d(y, 5, 1, 1, 0, 1, true, "after"));
  b.output(b.linear(y, 2, "fc"));
  const Graph g = b.finish();
  const ChannelGroups groups(g);
  const int stem = group_named(g, groups, "stem");
  ASSERT_GE(stem, 0);
  EXPECT_EQ(group_named(g, groups, "branch"), stem);
  EXPECT_EQ(source_names(g, groups.groups()[stem]), (std::vector<std::string>{"stem", "branch"}));
  EXPECT_EQ(groups.name(stem), "stem+1");
  EXPECT_EQ(groups.prunable().size(), 2u);  // {stem, branch} and {after}

  const ParameterSet params = weights_for(g, 5);
  const adapt::PrunedModel p = adapt::prune_channels(g, params, {{stem, {0, 3}}});
  // branch.weight [4,4,3,3] keeps filters 0, 3 and input channels 0, 3; after.weight [5,4,1,1]
  // keeps input channels 0, 3.
  EXPECT_EQ(p.params.at(p.graph.value_id("branch.weight")).shape(), (Shape{2, 2, 3, 3}));
  EXPECT_EQ(at(p.params, p.graph, "branch.weight", 1 * 18 + 1 * 9 + 4),
            at(params, g, "branch.weight", 3 * 36 + 3 * 9 + 4));
  EXPECT_EQ(p.params.at(p.graph.value_id("after.weight")).shape(), (Shape{5, 2, 1, 1}));
  EXPECT_EQ(at(p.params, p.graph, "after.weight", 4 * 2 + 1),
            at(params, g, "after.weight", 4 * 4 + 3));
}

TEST(ChannelGroups, AConcatPlacesEachInputsChannelsAtItsOffset) {
  GraphBuilder b("concat");
  ValueId x = b.input("x", {3, 5, 5});
  const ValueId l = b.relu(b.conv2d(x, 2, 1, 1, 0, 1, true, "left"));
  const ValueId r = b.relu(b.conv2d(x, 3, 1, 1, 0, 1, true, "right"));
  ValueId y = b.batchnorm2d(b.concat({l, r}), "bn");
  y = b.global_avgpool(b.conv2d(y, 4, 1, 1, 0, 1, true, "mix"));
  b.output(b.linear(y, 2, "fc"));
  const Graph g = b.finish();
  const ChannelGroups groups(g);
  EXPECT_NE(group_named(g, groups, "left"), group_named(g, groups, "right"));
  const ParameterSet params = weights_for(g, 6);
  const adapt::PrunedModel p =
      adapt::prune_channels(g, params, {{group_named(g, groups, "right"), {2}}});
  // The concatenation keeps channels 0, 1 (left) and 4 (right's 2): so do the BatchNorm after
  // it and mix's input channels.
  EXPECT_EQ(p.params.at(p.graph.value_id("mix.weight")).shape(), (Shape{4, 3, 1, 1}));
  for (int o = 0; o < 4; ++o) {
    EXPECT_EQ(at(p.params, p.graph, "mix.weight", o * 3 + 1),
              at(params, g, "mix.weight", o * 5 + 1));
    EXPECT_EQ(at(p.params, p.graph, "mix.weight", o * 3 + 2),
              at(params, g, "mix.weight", o * 5 + 4));
  }
  EXPECT_EQ(at(p.params, p.graph, "bn.running_var", 2), at(params, g, "bn.running_var", 4));
}

TEST(ChannelGroups, ADepthwiseConvolutionCarriesItsInputsChannels) {
  GraphBuilder b("depthwise");
  ValueId x = b.input("x", {3, 6, 6});
  x = b.relu(b.conv2d(x, 4, 1, 1, 0, 1, true, "pw1"));
  x = b.relu(b.batchnorm2d(b.conv2d(x, 4, 3, 1, 1, 4, false, "dw"), "bn"));
  x = b.global_avgpool(b.conv2d(x, 6, 1, 1, 0, 1, true, "pw2"));
  b.output(b.linear(x, 2, "fc"));
  const Graph g = b.finish();
  const ChannelGroups groups(g);
  EXPECT_EQ(group_named(g, groups, "dw"), -1) << "a depthwise convolution creates no channels";
  const ParameterSet params = weights_for(g, 7);
  const adapt::PrunedModel p =
      adapt::prune_channels(g, params, {{group_named(g, groups, "pw1"), {1, 2}}});
  const Node& dw = *p.graph.find_node("dw");
  EXPECT_EQ(dw.attr<Conv2dAttrs>().groups, 2);
  EXPECT_EQ(dw.attr<Conv2dAttrs>().in_channels, 2);
  EXPECT_EQ(p.params.at(p.graph.value_id("dw.weight")).shape(), (Shape{2, 1, 3, 3}));
  EXPECT_EQ(at(p.params, p.graph, "dw.weight", 9 + 5), at(params, g, "dw.weight", 2 * 9 + 5));
}

TEST(ChannelGroups, ChannelsMeetingTheInputOrAnUntracedOpAreNotPrunableAndSayWhy) {
  GraphBuilder b("blocked");
  ValueId x = b.input("x", {3, 4, 4});
  ValueId y = b.add(b.conv2d(x, 3, 1, 1, 0, 1, true, "same_as_input"), x);
  ValueId z = b.conv2d(y, 6, 1, 1, 0, 1, true, "reshaped");
  Graph& g = b.graph();
  z = g.add_node(OpKind::Reshape, "to_rows", ReshapeAttrs{{96}}, {z});
  b.output(b.linear(z, 2, "fc"));
  const Graph graph = b.finish();
  const ChannelGroups groups(graph);
  const auto& a = groups.groups()[group_named(graph, groups, "same_as_input")];
  EXPECT_NE(a.blocked.find("input 'x'"), std::string::npos) << a.blocked;
  const auto& r = groups.groups()[group_named(graph, groups, "reshaped")];
  EXPECT_NE(r.blocked.find("Reshape"), std::string::npos) << r.blocked;
  EXPECT_TRUE(groups.prunable().empty());
  const ParameterSet params = weights_for(graph, 8);
  try {
    adapt::prune_channels(graph, params, {{group_named(graph, groups, "reshaped"), {0}}});
    FAIL() << "pruned a group that cannot be pruned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be pruned"), std::string::npos) << e.what();
  }
}

// A model pruned of nothing, or rebuilt from its own channel counts, is the model itself: the
// same fingerprint (what a checkpoint of an adapted model is checked against).
TEST(PruneChannels, NothingPrunedIsTheModelItself) {
  for (const char* name : {"mnist_cnn", "resnet18", "mobilenet_v1:0.5"}) {
    zoo::ModelOptions o;
    o.input = Shape{3, 32, 32};
    const Graph g = zoo::build(name, o);
    EXPECT_EQ(train::model_fingerprint(adapt::prune_channels(g, weights_for(g, 1), {}).graph),
              train::model_fingerprint(g))
        << name;
    EXPECT_EQ(train::model_fingerprint(adapt::with_channel_counts(g, adapt::channel_counts(g))),
              train::model_fingerprint(g))
        << name;
  }
}

TEST(PruneChannels, KeptIndicesAreChecked) {
  const Graph g = small_cnn();
  const ParameterSet params = weights_for(g, 3);
  const int c1 = group_named(g, ChannelGroups(g), "c1");
  for (const std::vector<std::int64_t>& bad :
       {std::vector<std::int64_t>{}, {2, 1}, {1, 1}, {4}, {-1}})
    EXPECT_THROW(adapt::prune_channels(g, params, {{c1, bad}}), Error);
}

TEST(FilterRanking, NormsStrongestAndRounding) {
  const Graph g = small_cnn();
  ParameterSet params = weights_for(g, 3);
  const ChannelGroups groups(g);
  const auto& c1 = groups.groups()[group_named(g, groups, "c1")];
  // c1.weight [4,2,1,1] and c1.bias [4], set by hand: channel c's filter is (c, -1), bias 0,
  // except channel 0: (3, 4), bias 0.
  float* w = params.at(g.value_id("c1.weight")).f32();
  const float values[] = {3, 4, 1, -1, 2, -1, 3, -1};
  std::copy(std::begin(values), std::end(values), w);
  params.at(g.value_id("c1.bias")).zero();
  const auto l2 = adapt::channel_importance(g, params, c1, adapt::FilterNorm::L2);
  EXPECT_NEAR(l2[0], 5.0, 1e-12);
  EXPECT_NEAR(l2[2], std::sqrt(5.0), 1e-12);
  const auto l1 = adapt::channel_importance(g, params, c1, adapt::FilterNorm::L1);
  EXPECT_NEAR(l1[0], 7.0, 1e-12);
  EXPECT_NEAR(l1[3], 4.0, 1e-12);
  EXPECT_EQ(adapt::strongest_channels(l2, 2), (std::vector<std::int64_t>{0, 3}));
  EXPECT_EQ(adapt::strongest_channels({1.0, 2.0, 2.0, 1.0}, 3),
            (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(adapt::round_channels(13, 8, 64), 16);
  EXPECT_EQ(adapt::round_channels(11, 8, 64), 8);
  EXPECT_EQ(adapt::round_channels(3, 8, 64), 8);
  EXPECT_EQ(adapt::round_channels(3, 8, 6), 6);
  EXPECT_EQ(adapt::round_channels(61, 8, 60), 60);
  EXPECT_EQ(adapt::parse_filter_norm("l1"), adapt::FilterNorm::L1);
  EXPECT_THROW(adapt::parse_filter_norm("l3"), Error);
}

using Case = optimize::testing::ZooCase;

class ZooPruning : public ::testing::TestWithParam<Case> {};

// Every third channel of every prunable group is removed after its weights were zeroed.
TEST_P(ZooPruning, RemovingChannelsWithZeroWeightsLeavesTheOutputsUnchanged) {
  const Case& c = GetParam();
  zoo::ModelOptions options;
  options.input = c.input;
  const Graph g = zoo::build(c.model, options);
  ParameterSet params = weights_for(g, 21);
  const ChannelGroups groups(g);
  ASSERT_FALSE(groups.prunable().empty());
  std::map<int, std::vector<std::int64_t>> keep;
  std::map<int, std::set<std::int64_t>> removed;
  for (int group : groups.prunable()) {
    for (std::int64_t ch = 0; ch < groups.groups()[group].channels; ++ch)
      if (ch % 3 == 1)
        removed[group].insert(ch);
      else
        keep[group].push_back(ch);
  }
  zero_removed_channels(g, params, groups, removed);
  Rng rng(4);
  Shape batch = c.input;
  batch.insert(batch.begin(), 2);
  const Tensor x = ops::testing::uniform(batch, rng);
  const Tensor want = eval_output(g, params, x);

  adapt::PrunedModel p = adapt::prune_channels(g, params, keep);
  EXPECT_LT(p.graph.parameter_count(), g.parameter_count());
  for (int group : groups.prunable())
    for (NodeId source : groups.groups()[group].sources) {
      const Node& n = *p.graph.find_node(g.node(source).name);
      EXPECT_EQ(p.graph.value(n.outputs[0]).shape[1], static_cast<std::int64_t>(keep[group].size()))
          << n.name;
    }
  EXPECT_LE(relative_difference(want, eval_output(p.graph, p.params, x)), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Models, ZooPruning,
    ::testing::Values(Case{"mlp:784-256-128-10", {784}}, Case{"mnist_cnn", {1, 28, 28}},
                      Case{"alexnet", {1, 64, 64}}, Case{"mobilenet_v1", {3, 32, 32}},
                      Case{"mobilenet_v1:0.5", {1, 32, 32}}, Case{"resnet18", {3, 32, 32}},
                      Case{"resnet34", {3, 32, 32}}),
    zoo_case_name);

}  // namespace
