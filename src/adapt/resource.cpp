#include "adapt/resource.hpp"

#include <algorithm>

#include "backend/calibration.hpp"
#include "backend/inference.hpp"
#include "backend/sim/sim_backend.hpp"
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

void ResourceMeter::use_table(std::shared_ptr<const LatencyTable> table,
                              LutInterpolation interpolation) {
  require(kind_ == ResourceKind::Latency, "--lut gives latencies; it needs --resource latency");
  const std::string precision(backend::precision_name(precision_));
  require(table->header().target == target_ && table->header().precision == precision,
          "the latency table was built on {} ({}), not on --target {} ({}); build one there "
          "(telar lut build)",
          table->header().target, table->header().precision, target_, precision);
  table_ = std::move(table);
  interpolation_ = interpolation;
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

std::unique_ptr<backend::Executable> ResourceMeter::compile(const graph::Graph& graph,
                                                            graph::ParameterSet& weights,
                                                            Tensor& x) const {
  Shape shape = graph.value(graph.inputs().at(0)).shape;
  shape[0] = 1;
  x = Tensor(shape);
  Rng rng(1);
  for (float& v : x.span<float>()) v = rng.uniform(0.0f, 1.0f);
  backend::CompileOptions options;
  options.precision = precision_;
  options.quantization = backend::latency_calibration(graph, weights, precision_, x);
  return backend::compile_for_inference(backend::parse_backend_spec(target_), graph, weights, true,
                                        options);
}

void ResourceMeter::check_target(const graph::Graph& graph,
                                 const graph::ParameterSet& weights) const {
  if (!needs_weights()) return;
  graph::ParameterSet copy = weights;
  Tensor x;
  compile(graph, copy, x);
}

bool ResourceMeter::timed() const {
  return needs_weights() && backend::parse_backend_spec(target_).kind != "sim";
}

double ResourceMeter::operator()(const graph::Graph& graph,
                                 const graph::ParameterSet& weights) const {
  ++calls_;
  if (kind_ == ResourceKind::Macs)
    return static_cast<double>(graph::graph_cost(graph, graph::CostOptions{1, 1.0}).macs);
  if (kind_ == ResourceKind::Params) return static_cast<double>(graph.parameter_count());
  if (table_) return table_->estimate(graph, interpolation_);
  graph::ParameterSet copy = weights;  // compiling takes them mutable; inference changes nothing
  Tensor x;
  const auto exe = compile(graph, copy, x);
  const std::span<const Tensor> inputs(&x, 1);
  // A simulated accelerator's latency is its cycles (at 1 GHz, as telar bench's default), not
  // the time the host takes to simulate them.
  if (const auto* sim = backend::sim::simulated(*exe)) {
    exe->forward(inputs, backend::Mode::Eval);
    return static_cast<double>(backend::sim::totals(sim->node_simulations()).cycles) / 1e6;
  }
  return percentile(backend::measure_forward(*exe, inputs, measure_).chosen(), 0.5);
}

}  // namespace telar::adapt
