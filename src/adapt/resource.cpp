#include "adapt/resource.hpp"

#include <algorithm>

#include "backend/inference.hpp"
#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/statistics.hpp"
#include "graph/cost.hpp"

namespace telar::adapt {

namespace {
inline constexpr EnumNames<ResourceKind, ResourceKind::Params> kResourceNames{
    {"latency", "macs", "params"}};
}  // namespace

std::string_view resource_name(ResourceKind kind) {
  return kResourceNames(kind);
}

ResourceKind parse_resource(std::string_view text) {
  if (const auto kind = kResourceNames.find(text)) return *kind;
  fail("--resource '{}' is not a resource; use {}", text, kResourceNames.choices());
}

ResourceMeter::ResourceMeter(ResourceKind kind, std::string target, backend::Precision precision,
                             backend::MeasureOptions measure)
    : kind_(kind), target_(std::move(target)), precision_(precision), measure_(measure) {
  if (kind_ == ResourceKind::Latency)
    backend::check_usable(backend::parse_backend_spec(target_), "--target cpu");
}

std::string_view ResourceMeter::unit() const {
  switch (kind_) {
    case ResourceKind::Latency:
      return "ms";
    case ResourceKind::Macs:
      return "MACs";
    case ResourceKind::Params:
      return "parameters";
  }
  return "";
}

double ResourceMeter::operator()(const graph::Graph& graph,
                                 const graph::ParameterSet& weights) const {
  ++calls_;
  if (kind_ == ResourceKind::Macs)
    return static_cast<double>(graph::graph_cost(graph, graph::CostOptions{1, 1.0}).macs);
  if (kind_ == ResourceKind::Params) return static_cast<double>(graph.parameter_count());
  graph::ParameterSet copy = weights;  // compiling takes them mutable; inference changes nothing
  backend::CompileOptions options;
  options.precision = precision_;
  auto exe = backend::compile_for_inference(backend::parse_backend_spec(target_), graph, copy, true,
                                            options);
  Shape shape = graph.value(graph.inputs().at(0)).shape;
  shape[0] = 1;
  Tensor x(shape);
  Rng rng(1);
  for (float& v : x.span<float>()) v = rng.uniform(0.0f, 1.0f);
  return percentile(backend::measure_forward_ms(*exe, std::span<const Tensor>(&x, 1), measure_),
                    0.5);
}

}  // namespace telar::adapt
