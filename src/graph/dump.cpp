#include "graph/dump.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "graph/cost.hpp"
#include "graph/op_def.hpp"

namespace telar::graph {

std::string describe_attrs(const Node& n) {
  const auto& def = op_def(n.kind);
  return def.describe ? def.describe(n) : std::string();
}

std::string dump(const Graph& g) {
  std::string out;
  const auto params = g.parameter_count();
  out += fmt::format("graph {}: {} parameters ({:.2f} MiB fp32)\n", g.name(), params,
                     static_cast<double>(params) * 4.0 / (1024.0 * 1024.0));
  for (ValueId id : g.inputs()) {
    const Value& v = g.value(id);
    out += fmt::format("  input  {:<22} {} {}\n", v.name, dtype_name(v.dtype), shape_str(v.shape));
  }
  std::size_t attr_width = 26;  // wider where a node's attributes need it (fused post-ops)
  for (const auto& n : g.nodes()) attr_width = std::max(attr_width, describe_attrs(n).size());
  out += fmt::format("  {:<20} {:<14} {:<{}} {:<22} {:>10} {:>14} {:>14}\n", "node", "op",
                     "attributes", attr_width, "output", "params", "MACs/sample", "bytes/sample");
  std::int64_t total_macs = 0, total_bytes = 0;
  for (const auto& n : g.nodes()) {
    std::int64_t node_params = 0;
    for (ValueId in : n.inputs)
      if (g.value(in).kind == ValueKind::Parameter) node_params += shape_numel(g.value(in).shape);
    const auto cost = node_cost(g, n, CostOptions{1, 1.0});
    total_macs += cost.macs;
    total_bytes += cost.bytes();
    out += fmt::format("  {:<20} {:<14} {:<{}} {:<22} {:>10} {:>14} {:>14}\n", n.name,
                       op_name(n.kind), describe_attrs(n), attr_width,
                       shape_str(g.value(n.outputs[0]).shape),
                       node_params, cost.macs, cost.bytes());
  }
  for (ValueId id : g.outputs())
    out += fmt::format("  output {:<22} {}\n", g.value(id).name, shape_str(g.value(id).shape));
  out += fmt::format(
      "  total: {} nodes, {} parameters, {} MACs and {} bytes moved per sample (batch 1, fp32)\n",
      g.nodes().size(), params, total_macs, total_bytes);
  return out;
}

}  // namespace telar::graph
