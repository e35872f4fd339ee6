#pragma once
// Structured pruning: output channels removed by index, with every consequence applied.
//
// For each pruned group (adapt/channel_groups.hpp) the kept channels of every value that
// carries them follow: the creating layers lose filters and biases, per-channel layers after
// them (BatchNorm's weights and running statistics, depthwise convolutions' filters and group
// count) lose those channels, and the layers that read them lose input channels (a Linear after
// a Flatten the run of features of each channel; after a Concat, at the channel's offset).
// The result is a new graph with the same names, its shapes inferred anew, and weights of its
// own (copies: training it leaves the original's untouched).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "adapt/channel_groups.hpp"
#include "graph/graph.hpp"
#include "graph/parameters.hpp"

namespace telar::adapt {

// How the filters that create a channel are ranked: NetAdapt's L2 norm or the L1 norm.
enum class FilterNorm : std::uint8_t { L2, L1 };
FilterNorm parse_filter_norm(std::string_view text);  // "l2" or "l1"

// The importance of each channel of a group: the norm of its filters (weights and bias) taken
// over every layer of the group together.
std::vector<double> channel_importance(const graph::Graph& graph, const graph::ParameterSet& params,
                                       const ChannelGroup& group, FilterNorm norm);

// The indices of the `keep` most important channels, ascending (between equals, the lower
// index stays).
std::vector<std::int64_t> strongest_channels(const std::vector<double>& importance,
                                             std::int64_t keep);

// `count` rounded to a multiple of `multiple` (≥ 1), never below `multiple` nor above `limit`
// (NetAdapt's --round-to keeps channel counts friendly to vector units).
std::int64_t round_channels(std::int64_t count, std::int64_t multiple, std::int64_t limit);

struct PrunedModel {
  graph::Graph graph;
  graph::ParameterSet params;
};

// `graph` with, for each group listed (an index into ChannelGroups(graph).groups()), only the
// channels listed kept (ascending, distinct, at least one). Throws telar::Error for a group
// that is not prunable or an index out of range.
PrunedModel prune_channels(const graph::Graph& graph, const graph::ParameterSet& params,
                           const std::map<int, std::vector<std::int64_t>>& keep);

// Each channel group's count, by the name of its first layer: what an adapted model records so
// that its graph can be built again from the model it was adapted from.
std::map<std::string, std::int64_t> channel_counts(const graph::Graph& graph);
// `graph` with the groups named in `counts` reduced to those counts (the weights are to be
// loaded afterwards). Throws telar::Error for a name that is no group's first layer, or a count
// the group cannot take.
graph::Graph with_channel_counts(const graph::Graph& graph,
                                 const std::map<std::string, std::int64_t>& counts);

}  // namespace telar::adapt
