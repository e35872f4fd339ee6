#include "adapt/channel_groups.hpp"

#include <fmt/format.h>

#include <map>

#include "core/error.hpp"
#include "graph/op_def.hpp"

namespace telar::adapt {

namespace {

using graph::ChannelFlow;
using graph::Graph;
using graph::Node;
using graph::NodeId;
using graph::ValueId;
using graph::ValueKind;

// The spaces of channels and which must be pruned together (a union-find), each class with the
// first reason found why it cannot be pruned.
class Spaces {
 public:
  int add(std::int64_t channels, NodeId source, std::string blocked = "") {
    parent_.push_back(static_cast<int>(parent_.size()));
    channels_.push_back(channels);
    source_.push_back(source);
    blocked_.push_back(std::move(blocked));
    return parent_.back();
  }
  int find(int s) {
    while (parent_[s] != s) s = parent_[s] = parent_[parent_[s]];
    return s;
  }
  void unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    parent_[b] = a;
    if (blocked_[a].empty()) blocked_[a] = std::move(blocked_[b]);
  }
  void block(int s, const std::string& why) {
    std::string& reason = blocked_[find(s)];
    if (reason.empty()) reason = why;
  }
  std::size_t size() const { return parent_.size(); }
  std::int64_t channels(int s) const { return channels_[s]; }
  NodeId source(int s) const { return source_[s]; }
  const std::string& blocked(int root) const { return blocked_[root]; }

 private:
  std::vector<int> parent_;
  std::vector<std::int64_t> channels_;
  std::vector<NodeId> source_;
  std::vector<std::string> blocked_;
};

bool is_weight(const graph::Value& v) {
  return v.kind == ValueKind::Parameter || v.kind == ValueKind::Buffer;
}

std::string op_of(const Node& n) {
  return fmt::format("'{}' ({})", n.name, graph::op_def(n.kind).name);
}

bool same_arrangement(const std::vector<ChannelRun>& a, const std::vector<ChannelRun>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].channels != b[i].channels || a[i].repeat != b[i].repeat) return false;
  return true;
}

}  // namespace

ChannelGroups::ChannelGroups(const Graph& graph)
    : graph_(graph), runs_(graph.values().size()), node_group_(graph.nodes().size(), -1) {
  Spaces spaces;
  auto& runs = runs_;
  const auto channels_of = [&](ValueId v) {
    const Shape& s = graph.value(v).shape;
    return s.size() >= 2 ? s[1] : std::int64_t{0};
  };
  const auto block_all = [&](ValueId v, const std::string& why) {
    for (const ChannelRun& r : runs[static_cast<std::size_t>(v)]) spaces.block(r.space, why);
  };
  // A value whose channels start here and cannot be pruned.
  const auto fixed = [&](ValueId v, const std::string& why) {
    if (channels_of(v) > 0)
      runs[static_cast<std::size_t>(v)] = {{spaces.add(channels_of(v), -1, why), channels_of(v)}};
  };

  for (ValueId in : graph.inputs())
    fixed(in,
          fmt::format("its channels meet those of the graph's input '{}'", graph.value(in).name));

  for (const Node& n : graph.nodes()) {
    const ValueId out = n.outputs.at(0);
    auto& out_runs = runs[static_cast<std::size_t>(out)];
    const auto& in_runs = [&](std::size_t i) -> const std::vector<ChannelRun>& {
      return runs[static_cast<std::size_t>(n.inputs.at(i))];
    };
    switch (graph::channel_flow(graph, n)) {
      case ChannelFlow::Mix:
        require(n.inputs.size() >= 2 && is_weight(graph.value(n.inputs[1])),
                "cannot trace the channels of node {}: its weights are not a parameter", op_of(n));
        out_runs = {{spaces.add(channels_of(out), n.id), channels_of(out)}};
        break;
      case ChannelFlow::PerChannel:
        out_runs = in_runs(0);
        for (std::size_t i = 1; i < n.inputs.size(); ++i) {
          const graph::Value& w = graph.value(n.inputs[i]);
          if (!is_weight(w) || w.shape.empty() || w.shape[0] != channels_of(n.inputs[0]))
            block_all(n.inputs[0],
                      fmt::format("node {} reads '{}' beside them, which is not one weight per "
                                  "channel",
                                  op_of(n), w.name));
        }
        break;
      case ChannelFlow::Elementwise: {
        // The inputs whose dimension aligned with the output's channels has their number.
        const Shape& shape = graph.value(out).shape;
        std::vector<ValueId> carriers;
        for (ValueId in : n.inputs) {
          const Shape& s = graph.value(in).shape;
          const auto aligned =
              static_cast<std::int64_t>(s.size()) - static_cast<std::int64_t>(shape.size()) + 1;
          if (shape.size() >= 2 && aligned >= 0 && s[static_cast<std::size_t>(aligned)] == shape[1])
            carriers.push_back(in);
        }
        bool traced = !carriers.empty();
        for (ValueId c : carriers)
          traced = traced && !is_weight(graph.value(c)) &&
                   !runs[static_cast<std::size_t>(c)].empty() &&
                   same_arrangement(runs[static_cast<std::size_t>(c)],
                                    runs[static_cast<std::size_t>(carriers[0])]);
        if (!traced) {
          for (ValueId c : carriers)
            block_all(c, fmt::format("node {} joins them with a weight or with channels "
                                     "arranged otherwise",
                                     op_of(n)));
          fixed(out, fmt::format("they come from node {}", op_of(n)));
          break;
        }
        const auto& first = runs[static_cast<std::size_t>(carriers[0])];
        for (ValueId c : carriers)
          for (std::size_t i = 0; i < first.size(); ++i)
            spaces.unite(first[i].space, runs[static_cast<std::size_t>(c)][i].space);
        out_runs = first;
        break;
      }
      case ChannelFlow::Concatenate:
        out_runs.clear();
        for (ValueId in : n.inputs) {
          if (runs[static_cast<std::size_t>(in)].empty())
            fixed(in, fmt::format("node {} concatenates them with the weight '{}'", op_of(n),
                                  graph.value(in).name));
          const auto& r = runs[static_cast<std::size_t>(in)];
          out_runs.insert(out_runs.end(), r.begin(), r.end());
        }
        break;
      case ChannelFlow::Flatten: {
        const Shape& s = graph.value(n.inputs[0]).shape;
        std::int64_t spread = 1;
        for (std::size_t d = 2; d < s.size(); ++d) spread *= s[d];
        out_runs = in_runs(0);
        for (ChannelRun& r : out_runs) r.repeat *= spread;
        break;
      }
      case ChannelFlow::Opaque:
        for (ValueId in : n.inputs)
          block_all(in, fmt::format("node {} reads them, and telar does not trace channels "
                                    "through a {}",
                                    op_of(n), graph::op_def(n.kind).name));
        fixed(out, fmt::format("they come from node {}", op_of(n)));
        break;
    }
  }
  for (ValueId out : graph.outputs())
    block_all(out, fmt::format("they reach the graph's output '{}'", graph.value(out).name));

  // Groups: one per class of spaces that some layer created, in the order of its first layer.
  std::map<int, int> group_of_root;
  space_group_.assign(spaces.size(), -1);
  for (std::size_t s = 0; s < spaces.size(); ++s) {
    const int space = static_cast<int>(s);
    if (spaces.source(space) < 0) continue;
    const int root = spaces.find(space);
    auto [it, added] = group_of_root.emplace(root, static_cast<int>(groups_.size()));
    if (added) groups_.push_back({{}, spaces.channels(space), spaces.blocked(root)});
    groups_[static_cast<std::size_t>(it->second)].sources.push_back(spaces.source(space));
    node_group_[static_cast<std::size_t>(spaces.source(space))] = it->second;
  }
  for (std::size_t s = 0; s < spaces.size(); ++s) {
    const auto it = group_of_root.find(spaces.find(static_cast<int>(s)));
    if (it != group_of_root.end()) space_group_[s] = it->second;
  }
}

std::vector<int> ChannelGroups::prunable() const {
  std::vector<int> out;
  for (std::size_t g = 0; g < groups_.size(); ++g)
    if (groups_[g].blocked.empty() && groups_[g].channels > 1) out.push_back(static_cast<int>(g));
  return out;
}

const std::vector<ChannelRun>& ChannelGroups::runs(ValueId value) const {
  return runs_.at(static_cast<std::size_t>(value));
}

int ChannelGroups::group_of_space(int space) const {
  return space_group_.at(static_cast<std::size_t>(space));
}

int ChannelGroups::group_of_node(NodeId node) const {
  return node_group_.at(static_cast<std::size_t>(node));
}

std::string ChannelGroups::name(int group) const {
  const ChannelGroup& g = groups_.at(static_cast<std::size_t>(group));
  const std::string& first = graph_.node(g.sources.front()).name;
  return g.sources.size() == 1 ? first : fmt::format("{}+{}", first, g.sources.size() - 1);
}

}  // namespace telar::adapt
