#include "optimize/rewriter.hpp"

#include <algorithm>
#include <set>

#include "core/error.hpp"

namespace telar::optimize {

using graph::ValueId;
using graph::ValueKind;

GraphRewriter::GraphRewriter(const graph::Graph& source, const graph::ParameterSet& params)
    : source_(source),
      source_params_(params),
      graph_(source.name()),
      map_(source.values().size(), graph::kNoValue) {
  for (ValueId id : source.inputs()) {
    const graph::Value& v = source.value(id);
    map_[static_cast<std::size_t>(id)] = graph_.add_input(v.name, v.shape, v.dtype);
  }
}

ValueId GraphRewriter::map(ValueId source_value) {
  ValueId& mapped = map_.at(static_cast<std::size_t>(source_value));
  if (mapped != graph::kNoValue) return mapped;
  const graph::Value& v = source_.value(source_value);
  if (v.kind != ValueKind::Parameter && v.kind != ValueKind::Buffer)
    fail("internal: value '{}' is read before the rewritten graph has it", v.name);
  mapped = v.kind == ValueKind::Parameter ? graph_.add_parameter(v.name, v.shape, v.init)
                                          : graph_.add_buffer(v.name, v.shape, v.init);
  if (source_params_.has(source_value)) params_.set(mapped, source_params_.at(source_value));
  return mapped;
}

void GraphRewriter::redirect(ValueId source_value, ValueId now) {
  map_.at(static_cast<std::size_t>(source_value)) = now;
}

std::vector<ValueId> GraphRewriter::map_inputs(const graph::Node& node) {
  std::vector<ValueId> inputs;
  for (ValueId in : node.inputs) inputs.push_back(map(in));
  return inputs;
}

ValueId GraphRewriter::copy(const graph::Node& node) {
  const ValueId out = add(node.kind, node.name, node.attrs, map_inputs(node));
  redirect(node.outputs.at(0), out);
  return out;
}

ValueId GraphRewriter::add(graph::OpKind kind, const std::string& name, graph::Attrs attrs,
                           std::vector<ValueId> inputs) {
  return graph_.add_node(kind, name, std::move(attrs), std::move(inputs));
}

ValueId GraphRewriter::add_parameter(const std::string& base, Tensor tensor) {
  std::string name = base;
  for (int k = 2; source_.find_value(name) || graph_.find_value(name); ++k)
    name = base + "." + std::to_string(k);
  const ValueId id = graph_.add_parameter(name, tensor.shape(), graph::Initializer::zeros());
  params_.set(id, std::move(tensor));
  return id;
}

Rewritten GraphRewriter::finish(int rewrites) {
  for (ValueId out : source_.outputs()) graph_.add_output(map(out));
  return {std::move(graph_), std::move(params_), rewrites};
}

Rewritten fuse_pairs(const graph::Graph& graph, const graph::ParameterSet& params,
                     const std::map<graph::NodeId, graph::NodeId>& absorbs,
                     const FusePair& replace) {
  std::set<graph::NodeId> absorbed;
  for (const auto& [node, later] : absorbs) absorbed.insert(later);
  GraphRewriter r(graph, params);
  for (const graph::Node& n : graph.nodes()) {
    if (absorbed.count(n.id)) continue;
    const auto pair = absorbs.find(n.id);
    if (pair == absorbs.end()) {
      r.copy(n);
      continue;
    }
    const graph::Node& later = graph.node(pair->second);
    const ValueId out = replace(r, n, later);
    r.redirect(n.outputs.at(0), out);
    r.redirect(later.outputs.at(0), out);
  }
  return r.finish(static_cast<int>(absorbs.size()));
}

Rewritten fuse_chains(const graph::Graph& graph, const graph::ParameterSet& params,
                      const MatchChain& match) {
  std::map<graph::NodeId, Chain> ending_at;
  std::set<graph::NodeId> dropped;
  for (const graph::Node& n : graph.nodes())
    if (std::optional<Chain> chain = match(n)) {
      dropped.insert(chain->inner.begin(), chain->inner.end());
      ending_at.emplace(n.id, std::move(*chain));
    }
  GraphRewriter r(graph, params);
  for (const graph::Node& n : graph.nodes()) {
    if (dropped.count(n.id)) continue;
    const auto chain = ending_at.find(n.id);
    if (chain == ending_at.end()) {
      r.copy(n);
      continue;
    }
    const Chain& c = chain->second;
    std::vector<ValueId> inputs;
    for (ValueId v : c.inputs) inputs.push_back(r.map(v));
    r.redirect(n.outputs.at(0), r.add(c.kind, n.name, c.attrs, std::move(inputs)));
  }
  return r.finish(static_cast<int>(ending_at.size()));
}

bool is_graph_output(const graph::Graph& graph, ValueId value) {
  return std::find(graph.outputs().begin(), graph.outputs().end(), value) != graph.outputs().end();
}

bool read_only_by_one(const graph::Graph& graph, ValueId value) {
  return graph.consumers(value).size() == 1 && !is_graph_output(graph, value);
}

const graph::Node* sole_producer(const graph::Graph& graph, ValueId value, graph::OpKind kind) {
  const graph::Value& v = graph.value(value);
  if (v.producer < 0 || !read_only_by_one(graph, value)) return nullptr;
  const graph::Node& n = graph.node(v.producer);
  return n.kind == kind ? &n : nullptr;
}

bool weight_vector(const graph::Graph& graph, const graph::ParameterSet& params, ValueId value,
                   std::int64_t n) {
  const graph::Value& v = graph.value(value);
  return (v.kind == graph::ValueKind::Parameter || v.kind == graph::ValueKind::Buffer) &&
         params.has(value) && v.shape == Shape{n};
}

std::optional<float> scalar_constant(const graph::Graph& graph, const graph::ParameterSet& params,
                                     ValueId value) {
  const graph::Value& v = graph.value(value);
  if (v.kind != graph::ValueKind::Parameter && v.kind != graph::ValueKind::Buffer) return {};
  if (!params.has(value) || params.at(value).numel() != 1) return {};
  return params.at(value).f32()[0];
}

}  // namespace telar::optimize
