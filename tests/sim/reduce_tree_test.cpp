// The reduction-tree compiler on small trees worked out by hand (MAERI's ART rules: edge
// switches add 2:1 or pass on, a neuron that straddles two subtrees uses the augmented link
// towards its larger side, the switch that holds a whole neuron sends it to memory).
#include "sim/reduce_tree.hpp"

#include <gtest/gtest.h>

namespace telar::sim {
namespace {

const AdderConfig& at(const ReduceTree& t, int level, int j) {
  return t.nodes[ReduceTree::index(level, j)];
}

TEST(ReduceTree, TwoAlignedNeuronsOfFour) {
  // 8 multipliers, neurons 0-3 and 4-7: each is a subtree; the root forwards both (2:2).
  const ReduceTree t = compile_reduce_tree(ReduceNetwork::Art, 8, 4, 2);
  for (int j = 0; j < 4; ++j) {
    EXPECT_EQ(at(t, 2, j).mode, AdderMode::Add21) << j;
    EXPECT_EQ(at(t, 2, j).link, LinkDir::None) << j;
    EXPECT_FALSE(at(t, 2, j).to_memory) << j;
  }
  EXPECT_EQ(at(t, 1, 0).mode, AdderMode::Add21);
  EXPECT_EQ(at(t, 1, 1).mode, AdderMode::Add21);
  EXPECT_TRUE(at(t, 1, 0).to_memory);
  EXPECT_TRUE(at(t, 1, 1).to_memory);
  EXPECT_EQ(at(t, 0, 0).mode, AdderMode::Fw22);
  EXPECT_TRUE(at(t, 0, 0).to_memory);
  EXPECT_TRUE(at(t, 0, 0).left_enabled && at(t, 0, 0).right_enabled);
}

TEST(ReduceTree, StraddlingNeuronUsesTheAugmentedLink) {
  // Neurons 0-2 and 3-5 on 8 multipliers. Neuron 1 has one multiplier (3) under switch (2,1)
  // and two (4, 5) under (2,2): (2,1) sends multiplier 3 over the link to (2,2), which adds
  // 3:1 and sends the sum to memory; (2,1) still passes multiplier 2 up for neuron 0.
  const ReduceTree t = compile_reduce_tree(ReduceNetwork::Art, 8, 3, 2);
  EXPECT_EQ(at(t, 2, 0).mode, AdderMode::Add21);
  EXPECT_EQ(at(t, 2, 1).mode, AdderMode::Add11Fw11);
  EXPECT_EQ(at(t, 2, 1).link, LinkDir::Send);
  EXPECT_EQ(at(t, 2, 2).mode, AdderMode::Add31);
  EXPECT_EQ(at(t, 2, 2).link, LinkDir::Receive);
  EXPECT_TRUE(at(t, 2, 2).to_memory);
  EXPECT_FALSE(at(t, 2, 3).configured);
  EXPECT_EQ(at(t, 1, 0).mode, AdderMode::Add21);
  EXPECT_TRUE(at(t, 1, 0).to_memory);
  EXPECT_EQ(at(t, 0, 0).mode, AdderMode::Fw22);
  // Child links: (2,2) takes multipliers 4 and 5; (2,3) is idle; (1,1) hears only (2,2).
  EXPECT_TRUE(at(t, 2, 2).left_enabled && at(t, 2, 2).right_enabled);
  EXPECT_FALSE(at(t, 2, 3).left_enabled || at(t, 2, 3).right_enabled);
  EXPECT_TRUE(at(t, 1, 0).left_enabled && at(t, 1, 0).right_enabled);
  EXPECT_TRUE(at(t, 1, 1).left_enabled);
  EXPECT_FALSE(at(t, 1, 1).right_enabled);
}

TEST(ReduceTree, FenFoldsEachNeuronInTheNodeAboveIt) {
  // FEN: the switch that completes a neuron sends it up to a folding node (FOLD), which
  // accumulates the folds and writes to memory; the compiler stops at that level.
  const ReduceTree t = compile_reduce_tree(ReduceNetwork::Fen, 8, 4, 2);
  EXPECT_TRUE(at(t, 1, 0).to_fold_node);
  EXPECT_TRUE(at(t, 1, 1).to_fold_node);
  // (1,0) is even: its folding node is its parent, the root. (1,1) is odd: it climbs past the
  // root to the extra node next to it.
  EXPECT_EQ(t.nodes[0].mode, AdderMode::Fold);
  EXPECT_TRUE(t.nodes[0].to_memory);
  EXPECT_EQ(t.nodes[t.fen_special()].mode, AdderMode::Fold);
  EXPECT_TRUE(t.nodes[t.fen_special()].to_memory);
  const std::vector<int> up = fen_up_targets(8);
  EXPECT_EQ(up[ReduceTree::index(1, 0)], 0);
  EXPECT_EQ(up[ReduceTree::index(1, 1)], t.fen_special());
  EXPECT_EQ(up[ReduceTree::index(2, 2)], ReduceTree::index(1, 1));
  EXPECT_EQ(up[ReduceTree::index(2, 3)], t.fen_special());  // 3 = 0b11 climbs two levels
}

TEST(ReduceTree, CollectionBusWiring) {
  // 8 multipliers, 2 bus lines: the pair (2,1)-(2,2) first, on line 0 ports 0 and 1; then the
  // single switches (0,0), (1,0), (1,1), (2,0), (2,3) from port 2/1+1 = 2 on, alternating.
  const BusWiring w = wire_collection_bus(ReduceNetwork::Art, 8, 2);
  auto check = [&](int level, int j, int line, int port) {
    const int id = ReduceTree::index(level, j);
    EXPECT_EQ(w.line[id], line) << level << ":" << j;
    EXPECT_EQ(w.port[id], port) << level << ":" << j;
  };
  check(2, 1, 0, 0);
  check(2, 2, 0, 1);
  check(0, 0, 0, 2);
  check(1, 0, 1, 2);
  check(1, 1, 0, 3);
  check(2, 0, 1, 3);
  check(2, 3, 0, 4);
  EXPECT_EQ(w.ports_per_line, 5);
  EXPECT_EQ(w.order, (std::vector<int>{4, 5, 0, 1, 2, 3, 6}));
}

}  // namespace
}  // namespace telar::sim
