#include "cli/bench_target.hpp"

#include "backend/inference.hpp"
#include "backend/sim/sim_backend.hpp"

namespace telar::cli {

BenchTarget compile_target(const std::string& text, backend::Precision precision,
                           const graph::Graph& graph, graph::ParameterSet& weights, bool optimize,
                           std::shared_ptr<const backend::QuantizationTable> quantization) {
  BenchTarget t{text, backend::parse_backend_spec(text), precision, nullptr, std::nullopt};
  backend::check_usable(t.spec, "cpu");  // bench --target, crosseval --targets
  backend::CompileOptions options;
  options.precision = precision;
  options.quantization = std::move(quantization);
  t.exe = backend::compile_for_inference(t.spec, graph, weights, optimize, options);
  return t;
}

BenchPoint measure_target(BenchTarget& t, const Tensor& x, std::int64_t batch,
                          const backend::MeasureOptions& options, double clock_ghz) {
  BenchPoint p;
  p.target = t.text;
  p.precision = std::string(backend::precision_name(t.precision));
  p.batch = batch;
  p.accuracy = t.accuracy;
  const std::span<const Tensor> inputs(&x, 1);
  if (const auto* sim = backend::sim::simulated(*t.exe)) {
    t.exe->forward(inputs, backend::Mode::Eval);
    const auto totals = backend::sim::totals(sim->node_simulations());
    p.simulated = true;
    p.cycles = totals.cycles;
    p.host_nodes = totals.host_nodes;
    p.runs.ms = {static_cast<double>(totals.cycles) / (clock_ghz * 1e6)};
    p.runs.probe = {false};
  } else {
    p.runs = backend::measure_forward(*t.exe, inputs, options);
  }
  p.latency = summarize(p.runs.chosen());
  p.samples_per_s = static_cast<double>(batch) / (p.latency.median * 1e-3);
  return p;
}

}  // namespace telar::cli
