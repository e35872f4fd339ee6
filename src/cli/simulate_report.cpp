#include "cli/simulate_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/files.hpp"
#include "report/html_report.hpp"
#include "report/svg_chart.hpp"

namespace telar::cli {

namespace {

using backend::sim::NodeSimulation;

std::string percent(double v) {
  return fmt::format("{:.1f}%", 100.0 * v);
}

// The layers the charts show: the simulated ones (the host's have no simulated time).
std::vector<const NodeSimulation*> simulated_nodes(const SimulatedBackend& b) {
  std::vector<const NodeSimulation*> out;
  for (const NodeSimulation& n : b.nodes)
    if (n.simulated()) out.push_back(&n);
  return out;
}

nlohmann::json node_json(const NodeSimulation& n) {
  return {{"node", n.node},
          {"op", n.op},
          {"component", n.component},
          {"target", n.target},
          {"workload", n.workload},
          {"tile", n.tile},
          {"note", n.note},
          {"calls", n.calls},
          {"cycles", n.stats.cycles},
          {"gb_reads", n.stats.gb.reads()},
          {"gb_writes", n.stats.gb.writes()},
          {"weight_reads", n.stats.gb.weight_reads},
          {"input_reads", n.stats.gb.input_reads},
          {"psum_reads", n.stats.gb.psum_reads},
          {"multiplications", n.stats.multiplications},
          {"multipliers", n.stats.multipliers},
          {"utilization", n.utilization()},
          {"energy", n.energy}};
}

nlohmann::json backend_totals(const SimulatedBackend& b) {
  const backend::sim::SimulationTotals t = backend::sim::totals(b.nodes);
  return {{"backend", b.spec},
          {"cycles", t.cycles},
          {"gb_reads", t.gb_reads},
          {"gb_writes", t.gb_writes},
          {"multiplications", t.multiplications},
          {"energy", t.energy},
          {"simulated_layers", t.simulated_nodes},
          {"host_layers", t.host_nodes},
          {"seconds", b.seconds},
          {"max_abs_diff_vs_cpu", b.max_abs_diff}};
}

}  // namespace

void print_layer_table(std::ostream& out, const SimulateRun& run, const SimulatedBackend& b) {
  out << fmt::format("{} (batch {}{}) on {}:\n", run.model, run.batch,
                     run.weight_sparsity > 0 ? fmt::format(", weights pruned to {:.0f}% zeros",
                                                           100 * run.weight_sparsity)
                                             : "",
                     b.spec);
  out << fmt::format("{:<16} {:<13} {:<24} {:>12} {:>11} {:>10} {:>7} {:>11}  {}\n", "layer", "op",
                     "target", "cycles", "GB reads", "GB writes", "util", "energy", "workload");
  for (const NodeSimulation& n : b.nodes) {
    if (!n.simulated()) continue;
    out << fmt::format("{:<16} {:<13} {:<24} {:>12} {:>11} {:>10} {:>7} {:>11.5g}  {}\n", n.node,
                       n.op, n.target, n.stats.cycles, n.stats.gb.reads(), n.stats.gb.writes(),
                       percent(n.utilization()), n.energy, n.workload);
  }
  const backend::sim::SimulationTotals t = backend::sim::totals(b.nodes);
  out << fmt::format("{:<16} {:<13} {:<24} {:>12} {:>11} {:>10} {:>7} {:>11.5g}\n", "total", "",
                     fmt::format("{} simulated", t.simulated_nodes), t.cycles, t.gb_reads,
                     t.gb_writes, "", t.energy);
  // The host's layers counted by op, in the order they first run ("2 MaxPool2d, 1 Flatten").
  std::vector<std::pair<std::string, int>> by_op;
  for (const NodeSimulation& n : b.nodes) {
    if (n.simulated()) continue;
    auto it = std::find_if(by_op.begin(), by_op.end(), [&](const auto& e) { return e.first == n.op; });
    if (it == by_op.end())
      by_op.emplace_back(n.op, 1);
    else
      ++it->second;
  }
  std::string host;
  for (const auto& [op, count] : by_op) host += fmt::format("{}{} {}", host.empty() ? "" : ", ", count, op);
  out << fmt::format("on the host: {} layer(s){}\n", t.host_nodes, host.empty() ? "" : ": " + host);
  for (const NodeSimulation& n : b.nodes)
    if (!n.simulated() && (n.op == "EmbeddingBag" || n.op == "Linear" || n.op == "Conv2d"))
      out << fmt::format("  {}: {}\n", n.node, n.note);
  out << fmt::format(
      "outputs equal the cpu backend's (max abs difference {:.3g}); simulated in {:.2f} s\n\n",
      b.max_abs_diff, b.seconds);
}

void print_comparison(std::ostream& out, const std::vector<SimulatedBackend>& results) {
  out << "comparison:\n";
  out << fmt::format("{:<28} {:>12} {:>12} {:>11} {:>12}\n", "target", "cycles", "GB reads",
                     "GB writes", "energy");
  for (const SimulatedBackend& b : results) {
    const backend::sim::SimulationTotals t = backend::sim::totals(b.nodes);
    out << fmt::format("{:<28} {:>12} {:>12} {:>11} {:>12.5g}\n", b.label, t.cycles, t.gb_reads,
                       t.gb_writes, t.energy);
  }
  out << "\n";
}

nlohmann::json totals_json(const std::vector<SimulatedBackend>& results) {
  nlohmann::json j = nlohmann::json::array();
  for (const SimulatedBackend& b : results) j.push_back(backend_totals(b));
  return results.size() == 1 ? j[0] : nlohmann::json{{"backends", j}};
}

void write_simulation_outputs(const report::RunDirectory& dir, const SimulateRun& run,
                              const std::vector<SimulatedBackend>& results) {
  // layers.csv: tidy, one row per (target, layer, metric).
  std::string csv = "backend,layer,op,component,target,metric,value\n";
  for (const SimulatedBackend& b : results)
    for (const NodeSimulation& n : b.nodes) {
      if (!n.simulated()) continue;
      const std::pair<const char*, double> metrics[] = {
          {"cycles", static_cast<double>(n.stats.cycles)},
          {"gb_reads", static_cast<double>(n.stats.gb.reads())},
          {"gb_writes", static_cast<double>(n.stats.gb.writes())},
          {"multiplications", static_cast<double>(n.stats.multiplications)},
          {"utilization", n.utilization()},
          {"energy", n.energy}};
      for (const auto& [metric, value] : metrics)
        csv += fmt::format("{},{},{},{},{},{},{}\n", b.label, n.node, n.op, n.component, n.target,
                           metric, value);
    }
  write_file_atomic(dir.file("layers.csv"), csv);

  nlohmann::json sim = nlohmann::json::array();
  for (const SimulatedBackend& b : results) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const NodeSimulation& n : b.nodes) nodes.push_back(node_json(n));
    sim.push_back({{"totals", backend_totals(b)}, {"layers", nodes}});
  }
  dir.write_json("simulation.json",
                 {{"model", run.model}, {"batch", run.batch}, {"backends", sim}});

  report::HtmlReport html(fmt::format("telar simulate: {}", run.model));
  html.key_values({{"model", run.model},
                   {"batch", std::to_string(run.batch)},
                   {"weights", run.checkpoint.empty() ? "random" : run.checkpoint},
                   {"weight sparsity", fmt::format("{:.0f}%", 100 * run.weight_sparsity)}});
  if (results.size() > 1) {
    html.heading("Comparison");
    std::vector<std::vector<std::string>> rows;
    report::BarChart cycles{"total cycles", "cycles", {}, {"cycles"}, {{}}, false, true};
    report::BarChart traffic{
        "Global Buffer traffic", "accesses", {}, {"reads", "writes"}, {{}, {}}, true, true};
    for (const SimulatedBackend& b : results) {
      const backend::sim::SimulationTotals t = backend::sim::totals(b.nodes);
      rows.push_back({b.spec, std::to_string(t.cycles), std::to_string(t.gb_reads),
                      std::to_string(t.gb_writes), fmt::format("{:.5g}", t.energy)});
      cycles.categories.push_back(b.label);
      cycles.values[0].push_back(static_cast<double>(t.cycles));
      traffic.categories.push_back(b.label);
      traffic.values[0].push_back(static_cast<double>(t.gb_reads));
      traffic.values[1].push_back(static_cast<double>(t.gb_writes));
    }
    html.table({"target", "cycles", "GB reads", "GB writes", "energy"}, rows);
    html.svg(cycles.render());
    html.svg(traffic.render());
    // Per layer, the targets side by side (layers simulated by the first target).
    report::BarChart per_layer{"cycles per layer", "cycles", {}, {}, {}, false, false};
    for (const NodeSimulation* n : simulated_nodes(results[0]))
      per_layer.categories.push_back(n->node);
    for (const SimulatedBackend& b : results) {
      per_layer.stack_names.push_back(b.label);
      std::vector<double> v;
      for (const std::string& layer : per_layer.categories) {
        double c = 0;
        for (const NodeSimulation& n : b.nodes)
          if (n.node == layer) c = static_cast<double>(n.stats.cycles);
        v.push_back(c);
      }
      per_layer.values.push_back(v);
    }
    html.svg(per_layer.render(1000, 380));
  }
  for (const SimulatedBackend& b : results) {
    html.heading(b.spec);
    const backend::sim::SimulationTotals t = backend::sim::totals(b.nodes);
    html.key_values(
        {{"cycles", std::to_string(t.cycles)},
         {"Global Buffer reads", std::to_string(t.gb_reads)},
         {"Global Buffer writes", std::to_string(t.gb_writes)},
         {"energy", fmt::format("{:.6g}", t.energy)},
         {"simulated layers", std::to_string(t.simulated_nodes)},
         {"layers on the host", std::to_string(t.host_nodes)},
         {"outputs vs cpu backend", fmt::format("max abs difference {:.3g}", b.max_abs_diff)},
         {"simulation time", fmt::format("{:.2f} s", b.seconds)}});
    const auto nodes = simulated_nodes(b);
    report::BarChart cycles{"cycles per layer", "cycles", {}, {"cycles"}, {{}}, true, false};
    report::BarChart traffic{"Global Buffer reads and writes per layer",
                             "accesses",
                             {},
                             {"weight reads", "input reads", "partial-sum reads", "writes"},
                             {{}, {}, {}, {}},
                             true,
                             false};
    for (const NodeSimulation* n : nodes) {
      cycles.categories.push_back(n->node);
      cycles.values[0].push_back(static_cast<double>(n->stats.cycles));
      traffic.categories.push_back(n->node);
      traffic.values[0].push_back(static_cast<double>(n->stats.gb.weight_reads));
      traffic.values[1].push_back(static_cast<double>(n->stats.gb.input_reads));
      traffic.values[2].push_back(static_cast<double>(n->stats.gb.psum_reads));
      traffic.values[3].push_back(static_cast<double>(n->stats.gb.writes()));
    }
    if (!nodes.empty()) {
      html.svg(cycles.render(1000, 360));
      html.svg(traffic.render(1000, 380));
    }
    std::vector<std::vector<std::string>> rows;
    for (const NodeSimulation& n : b.nodes)
      rows.push_back({n.node, n.op, n.target, n.simulated() ? std::to_string(n.stats.cycles) : "",
                      n.simulated() ? std::to_string(n.stats.gb.reads()) : "",
                      n.simulated() ? std::to_string(n.stats.gb.writes()) : "",
                      n.simulated() ? percent(n.utilization()) : "",
                      n.simulated() ? fmt::format("{:.5g}", n.energy) : "", n.workload, n.tile,
                      n.note});
    html.table({"layer", "op", "target", "cycles", "GB reads", "GB writes", "utilization", "energy",
                "workload", "tile", "note"},
               rows);
  }
  html.write(dir.file("report.html"));
}

}  // namespace telar::cli
