#pragma once
// Shared by the pruning tests (zoo models here, imported ONNX classifiers in tests/onnx): the
// weights of the channels a pruning removes set to zero, so that removing them must leave the
// outputs unchanged.
#include <map>
#include <set>

#include "adapt/channel_groups.hpp"
#include "graph/graph.hpp"
#include "graph/op_def.hpp"
#include "graph/parameters.hpp"

namespace telar::adapt::testing {

// Zeroes every weight that creates or carries the channels `removed` drops: the creating
// layers' filters and biases and every per-channel weight after them (BatchNorm's gamma and
// beta, a depthwise filter), so those channels are 0 wherever a layer reads them.
inline void zero_removed_channels(const graph::Graph& g, graph::ParameterSet& params,
                                  const ChannelGroups& groups,
                                  const std::map<int, std::set<std::int64_t>>& removed) {
  const auto removed_of = [&](graph::ValueId v) {
    std::set<std::int64_t> out;
    std::int64_t offset = 0;
    for (const ChannelRun& r : groups.runs(v)) {
      const auto it = removed.find(groups.group_of_space(r.space));
      if (it != removed.end())
        for (std::int64_t c : it->second)
          for (std::int64_t f = 0; f < r.repeat; ++f) out.insert(offset + c * r.repeat + f);
      offset += r.channels * r.repeat;
    }
    return out;
  };
  for (const graph::Node& n : g.nodes()) {
    const bool creates = groups.group_of_node(n.id) >= 0;
    const std::set<std::int64_t> channels =
        creates ? removed_of(n.outputs[0]) : removed_of(n.inputs[0]);
    if (channels.empty() || graph::channel_flow(g, n) == graph::ChannelFlow::Elementwise) continue;
    for (std::size_t i = 1; i < n.inputs.size(); ++i) {
      if (!params.has(n.inputs[i])) continue;
      if (n.kind == graph::OpKind::BatchNorm2d && i > 2) continue;  // running statistics may stay
      Tensor& w = params.at(n.inputs[i]);
      const std::int64_t per = w.numel() / w.shape()[0];
      for (std::int64_t c : channels) std::fill_n(w.f32() + c * per, per, 0.0f);
    }
  }
}

}  // namespace telar::adapt::testing
