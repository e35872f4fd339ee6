#pragma once
// DLRM on the simulated hybrid accelerator, per component (EmbeddingBags, Bottom MLP, Top MLP):
// the terminal tables, components.csv and nodes.csv, the JSON for run.json, and the HTML
// section with the stacked-bar charts of the thesis' Figs. 40-51 (cycles, Global Buffer reads,
// Global Buffer writes per workload, stacked by component; and the share of cycles).
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dlrm/executor.hpp"
#include "report/html_report.hpp"

namespace telar::report {

// One simulated workload (a run, or one of the thesis preset's).
struct DlrmSimulation {
  std::string name;             // "DLRM(1)", or "run"
  std::string group;            // "validation", "group 1", ... or ""
  std::string flags;            // the dlrm_s_pytorch.py flags that describe it
  std::string thesis_eb_share;  // what the thesis states, or ""
  dlrm::SimulationSummary sim;
  double seconds = 0.0;  // wall time of the workload (values and simulation)
};

// The components the thesis reports, in its order.
const std::vector<dlrm::Component>& simulated_components();

// component | cycles | share | GB reads | GB writes | energy | calls, and a total line.
std::string component_table(const dlrm::SimulationSummary& sim);
// One line per workload: cycles, the three shares, EB reads and writes, MLP reads and writes.
std::string workload_table(const std::vector<DlrmSimulation>& runs);

// {"target", "accelerators", "forwards", "samples", "lookups", "components": {name: {cycles,
// gb_reads, gb_writes, energy, calls, cycle_share}}, "total": {...}}
nlohmann::json simulation_json(const dlrm::SimulationSummary& sim);

// components.csv: workload,group,component,cycles,gb_reads,gb_writes,energy,cycle_share,calls
// (one row per workload and component, the host's components included with zeros).
void write_components_csv(const std::filesystem::path& path,
                          const std::vector<DlrmSimulation>& runs);
// nodes.csv: workload,node,component,op,target,workload_shape,tile,calls,cycles,gb_reads,
// gb_writes,energy,note (one row per graph node).
void write_nodes_csv(const std::filesystem::path& path, const std::vector<DlrmSimulation>& runs);

// The report's section: per workload group, stacked bars of cycles, reads and writes by
// component; the share of cycles of every workload; the figures as tables.
void add_simulation_section(HtmlReport& html, const std::vector<DlrmSimulation>& runs);

}  // namespace telar::report
