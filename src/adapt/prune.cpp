#include "adapt/prune.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "graph/op_def.hpp"

namespace telar::adapt {

namespace {

using graph::ChannelFlow;
using graph::Graph;
using graph::Node;
using graph::ValueId;
using graph::ValueKind;

inline constexpr EnumNames<FilterNorm, FilterNorm::L1> kFilterNormNames{{"l2", "l1"}};

// Kept indices along one dimension; nullopt: all of them.
using Keep = std::optional<std::vector<std::int64_t>>;

// What a weight keeps of its first two dimensions.
struct WeightKeep {
  Keep rows, cols;
  bool operator==(const WeightKeep&) const = default;
};

// Elements [i, j, ...] of `t` for the kept i of dimension 0 and j of dimension 1.
Tensor select(const Tensor& t, const WeightKeep& keep) {
  const Shape& s = t.shape();
  const std::int64_t rows = s.at(0);
  const std::int64_t cols = s.size() >= 2 ? s[1] : 1;
  const std::int64_t inner = s.size() >= 2 ? t.numel() / (rows * cols) : 1;
  std::vector<std::int64_t> all_rows(static_cast<std::size_t>(rows)),
      all_cols(static_cast<std::size_t>(cols));
  std::iota(all_rows.begin(), all_rows.end(), 0);
  std::iota(all_cols.begin(), all_cols.end(), 0);
  const auto& r = keep.rows ? *keep.rows : all_rows;
  const auto& c = keep.cols ? *keep.cols : all_cols;
  Shape shape = s;
  shape[0] = static_cast<std::int64_t>(r.size());
  if (s.size() >= 2) shape[1] = static_cast<std::int64_t>(c.size());
  Tensor out(shape);
  float* o = out.f32();
  const float* in = t.f32();
  for (std::int64_t i : r)
    for (std::int64_t j : c) {
      std::copy_n(in + (i * cols + j) * inner, inner, o);
      o += inner;
    }
  return out;
}

// The channels of a value that stay, from the kept channels of each space; nullopt when all do.
Keep kept_channels(const std::vector<ChannelRun>& runs, const std::vector<Keep>& space_keep) {
  bool pruned = false;
  for (const ChannelRun& r : runs) pruned = pruned || space_keep[static_cast<std::size_t>(r.space)];
  if (!pruned) return std::nullopt;
  std::vector<std::int64_t> out;
  std::int64_t offset = 0;
  for (const ChannelRun& r : runs) {
    const Keep& k = space_keep[static_cast<std::size_t>(r.space)];
    for (std::int64_t c = 0; c < r.channels; ++c) {
      if (k && !std::binary_search(k->begin(), k->end(), c)) continue;
      for (std::int64_t f = 0; f < r.repeat; ++f) out.push_back(offset + c * r.repeat + f);
    }
    offset += r.channels * r.repeat;
  }
  return out;
}

std::int64_t count(const Keep& keep, std::int64_t all) {
  return keep ? static_cast<std::int64_t>(keep->size()) : all;
}

// A node's attributes for its new channel counts.
graph::Attrs resized(const Node& n, std::int64_t in, std::int64_t out) {
  graph::Attrs attrs = n.attrs;
  if (auto* a = std::get_if<graph::Conv2dAttrs>(&attrs)) {
    const bool depthwise = a->groups > 1 && a->groups == a->in_channels;
    if (depthwise) a->groups = in;  // one group per channel (a grouped convolution stays whole)
    a->in_channels = in;
    a->out_channels = out;
  } else if (auto* l = std::get_if<graph::LinearAttrs>(&attrs)) {
    l->in_features = in;
    l->out_features = out;
  } else if (auto* b = std::get_if<graph::BatchNormAttrs>(&attrs)) {
    b->channels = in;
  }
  return attrs;
}

}  // namespace

FilterNorm parse_filter_norm(std::string_view text) {
  if (const auto norm = kFilterNormNames.find(text)) return *norm;
  fail("unknown filter norm '{}'; use {}", text, kFilterNormNames.choices());
}

std::vector<double> channel_importance(const Graph& graph, const graph::ParameterSet& params,
                                       const ChannelGroup& group, FilterNorm norm) {
  std::vector<double> importance(static_cast<std::size_t>(group.channels), 0.0);
  for (graph::NodeId source : group.sources) {
    const Node& n = graph.node(source);
    for (std::size_t i = 1; i < n.inputs.size(); ++i) {  // the weights, then the bias
      const Tensor& w = params.at(n.inputs[i]);
      const std::int64_t per_channel = w.numel() / group.channels;
      for (std::int64_t c = 0; c < group.channels; ++c)
        for (std::int64_t k = 0; k < per_channel; ++k) {
          const double x = w.f32()[c * per_channel + k];
          importance[static_cast<std::size_t>(c)] += norm == FilterNorm::L2 ? x * x : std::abs(x);
        }
    }
  }
  if (norm == FilterNorm::L2)
    for (double& x : importance) x = std::sqrt(x);
  return importance;
}

std::vector<std::int64_t> strongest_channels(const std::vector<double>& importance,
                                             std::int64_t keep) {
  require(keep >= 1 && keep <= static_cast<std::int64_t>(importance.size()),
          "cannot keep {} of {} channels", keep, importance.size());
  std::vector<std::int64_t> order(importance.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return importance[static_cast<std::size_t>(a)] > importance[static_cast<std::size_t>(b)];
  });
  order.resize(static_cast<std::size_t>(keep));
  std::sort(order.begin(), order.end());
  return order;
}

std::int64_t round_channels(std::int64_t count, std::int64_t multiple, std::int64_t limit) {
  require(multiple >= 1, "--round-to must be at least 1, not {}", multiple);
  const std::int64_t rounded = (count + multiple / 2) / multiple * multiple;
  return std::min(std::max(rounded, std::min(multiple, limit)), limit);
}

PrunedModel prune_channels(const Graph& graph, const graph::ParameterSet& params,
                           const std::map<int, std::vector<std::int64_t>>& keep) {
  const ChannelGroups groups(graph);
  std::vector<Keep> group_keep(groups.groups().size());
  for (const auto& [g, kept] : keep) {
    require(g >= 0 && g < static_cast<int>(groups.groups().size()),
            "internal: channel group {} does not exist", g);
    const ChannelGroup& group = groups.groups()[static_cast<std::size_t>(g)];
    require(group.blocked.empty(), "the channels of {} cannot be pruned: {}", groups.name(g),
            group.blocked);
    require(!kept.empty() && std::is_sorted(kept.begin(), kept.end()) &&
                std::adjacent_find(kept.begin(), kept.end()) == kept.end() && kept.front() >= 0 &&
                kept.back() < group.channels,
            "the channels kept of {} must be distinct indices below {}, ascending, at least one",
            groups.name(g), group.channels);
    group_keep[static_cast<std::size_t>(g)] = kept;
  }
  // Kept channels by space, then by value.
  std::vector<Keep> space_keep;
  for (int s = 0; s < groups.space_count(); ++s) {
    const int g = groups.group_of_space(s);
    space_keep.push_back(g >= 0 ? group_keep[static_cast<std::size_t>(g)] : std::nullopt);
  }
  std::vector<Keep> value_keep(graph.values().size());
  for (const auto& v : graph.values())
    value_keep[static_cast<std::size_t>(v.id)] = kept_channels(groups.runs(v.id), space_keep);

  // What each weight keeps, from the nodes that read it.
  std::vector<std::optional<WeightKeep>> weight_keep(graph.values().size());
  const auto weight = [&](ValueId w, WeightKeep k) {
    auto& slot = weight_keep[static_cast<std::size_t>(w)];
    if (slot && !(*slot == k))
      fail("the weight '{}' is shared by layers whose channels would be pruned differently",
           graph.value(w).name);
    slot = std::move(k);
  };
  for (const Node& n : graph.nodes()) {
    const Keep& in = value_keep[static_cast<std::size_t>(n.inputs.at(0))];
    const Keep& out = value_keep[static_cast<std::size_t>(n.outputs.at(0))];
    switch (graph::channel_flow(graph, n)) {
      case ChannelFlow::Mix:
        weight(n.inputs[1], {out, in});
        if (n.inputs.size() > 2) weight(n.inputs[2], {out, std::nullopt});
        break;
      case ChannelFlow::PerChannel:
        for (std::size_t i = 1; i < n.inputs.size(); ++i) weight(n.inputs[i], {in, std::nullopt});
        break;
      default:
        for (ValueId v : n.inputs)
          if (graph.value(v).kind != ValueKind::Activation &&
              graph.value(v).kind != ValueKind::Input)
            weight(v, {});
        break;
    }
  }

  PrunedModel result{Graph(graph.name()), {}};
  Graph& g = result.graph;
  std::vector<ValueId> map(graph.values().size(), graph::kNoValue);
  for (ValueId in : graph.inputs()) {
    const graph::Value& v = graph.value(in);
    map[static_cast<std::size_t>(in)] = g.add_input(v.name, v.shape, v.dtype);
  }
  // A weight is made when a node first reads it, as the graph's builder made it: a model pruned
  // of nothing is the model itself, to its fingerprint.
  const auto mapped = [&](ValueId id) {
    ValueId& m = map[static_cast<std::size_t>(id)];
    const graph::Value& v = graph.value(id);
    if (m != graph::kNoValue || (v.kind != ValueKind::Parameter && v.kind != ValueKind::Buffer))
      return m;
    const auto& k = weight_keep[static_cast<std::size_t>(id)];
    Tensor t = params.has(id) ? (k ? select(params.at(id), *k) : params.at(id).clone()) : Tensor();
    Shape shape = v.shape;
    if (k && k->rows) shape[0] = static_cast<std::int64_t>(k->rows->size());
    if (k && k->cols) shape[1] = static_cast<std::int64_t>(k->cols->size());
    m = v.kind == ValueKind::Parameter ? g.add_parameter(v.name, shape, v.init)
                                       : g.add_buffer(v.name, shape, v.init);
    if (t.defined()) result.params.set(m, std::move(t));
    return m;
  };
  for (const Node& n : graph.nodes()) {
    std::vector<ValueId> inputs;
    for (ValueId in : n.inputs) inputs.push_back(mapped(in));
    const Shape& in_shape = graph.value(n.inputs[0]).shape;
    const Shape& out_shape = graph.value(n.outputs[0]).shape;
    const std::int64_t in_channels =
        in_shape.size() >= 2 ? count(value_keep[static_cast<std::size_t>(n.inputs[0])], in_shape[1])
                             : 0;
    const std::int64_t out_channels =
        out_shape.size() >= 2
            ? count(value_keep[static_cast<std::size_t>(n.outputs[0])], out_shape[1])
            : 0;
    map[static_cast<std::size_t>(n.outputs[0])] =
        g.add_node(n.kind, n.name, resized(n, in_channels, out_channels), std::move(inputs));
  }
  for (ValueId out : graph.outputs()) g.add_output(map[static_cast<std::size_t>(out)]);
  return result;
}

std::map<std::string, std::int64_t> channel_counts(const Graph& graph) {
  const ChannelGroups groups(graph);
  std::map<std::string, std::int64_t> out;
  for (const ChannelGroup& g : groups.groups())
    out[graph.node(g.sources.front()).name] = g.channels;
  return out;
}

Graph with_channel_counts(const Graph& graph, const std::map<std::string, std::int64_t>& counts) {
  const ChannelGroups groups(graph);
  std::map<int, std::vector<std::int64_t>> keep;
  for (const auto& [name, count] : counts) {
    const Node* node = graph.find_node(name);
    const int g = node ? groups.group_of_node(node->id) : -1;
    require(g >= 0 && groups.groups()[static_cast<std::size_t>(g)].sources.front() == node->id,
            "'{}' is not the first layer of a channel group of {}; the adapted model does not "
            "come from this one",
            name, graph.name());
    const std::int64_t channels = groups.groups()[static_cast<std::size_t>(g)].channels;
    require(count >= 1 && count <= channels, "{} cannot have {} channels (it has {})", name, count,
            channels);
    if (count == channels) continue;
    std::vector<std::int64_t> first(static_cast<std::size_t>(count));
    std::iota(first.begin(), first.end(), 0);
    keep[g] = std::move(first);
  }
  return prune_channels(graph, graph::ParameterSet{}, keep).graph;  // the structure only
}

}  // namespace telar::adapt
