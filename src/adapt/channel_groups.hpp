#pragma once
// Which output channels of a graph can be pruned together, found from the graph alone.
//
// Every Conv2d (ungrouped) and Linear creates new channels; the ops after it carry them on
// (graph::ChannelFlow, each op's definition says how). Channels that meet one to one (the two
// operands of a residual Add, a squeeze-and-excitation scale) must be pruned together, so the
// layers that create them form one group; a Concat places its inputs' channels one after
// another, a Flatten spreads each over consecutive features. A group whose channels reach the
// graph's output, an input of the graph, a weight that is not per channel, or an op whose
// channel flow is not traced (a Reshape, a Transpose, a grouped convolution) is not prunable,
// and says why.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace telar::adapt {

// A run of consecutive channels of a value: `channels` channels of a space (the channels one
// layer creates), each repeated `repeat` times (after a Flatten, one channel is `repeat`
// features).
struct ChannelRun {
  int space = 0;
  std::int64_t channels = 0;
  std::int64_t repeat = 1;
};

struct ChannelGroup {
  // The Conv2d and Linear nodes whose output channels are pruned together, in graph order.
  std::vector<graph::NodeId> sources;
  std::int64_t channels = 0;
  // Empty for a prunable group; otherwise why its channels must stay.
  std::string blocked;
};

class ChannelGroups {
 public:
  // Traces the channels of every value of `graph`; throws telar::Error for a graph it cannot
  // trace (an inference graph with fused post-ops).
  explicit ChannelGroups(const graph::Graph& graph);

  // Every group with at least one source, in the order of its first source.
  const std::vector<ChannelGroup>& groups() const { return groups_; }
  // The prunable ones (indices into groups()).
  std::vector<int> prunable() const;
  // The channels of a value (dimension 1), as runs of spaces; empty for weights.
  const std::vector<ChannelRun>& runs(graph::ValueId value) const;
  // The group a space belongs to (index into groups()), -1 for a space no layer created (an
  // input's channels) or one that joined no group.
  int group_of_space(int space) const;
  int space_count() const { return static_cast<int>(space_group_.size()); }
  // The group of a Conv2d's or Linear's output channels, -1 for other nodes.
  int group_of_node(graph::NodeId node) const;
  // A short name for a group: its first source, and "+N" for more.
  std::string name(int group) const;

 private:
  const graph::Graph& graph_;
  std::vector<std::vector<ChannelRun>> runs_;  // by ValueId
  std::vector<int> space_group_;               // by space
  std::vector<int> node_group_;                // by NodeId
  std::vector<ChannelGroup> groups_;
};

}  // namespace telar::adapt
