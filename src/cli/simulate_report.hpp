#pragma once
// What telar simulate prints and writes: the per-layer table, the comparison of several
// targets, layers.csv (tidy: one row per layer, target and metric), simulation.json and
// report.html (per-layer charts of cycles and Global Buffer traffic).
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "backend/sim/sim_backend.hpp"
#include "report/run_dir.hpp"

namespace telar::cli {

struct SimulateRun {
  std::string model;
  std::int64_t batch = 1;
  double weight_sparsity = 0.0;
  std::string checkpoint;
  std::filesystem::path run_path;
};

struct SimulatedBackend {
  std::string spec, label;
  std::vector<backend::sim::NodeSimulation> nodes;
  double seconds = 0.0;       // wall time of the simulation (compile + forward)
  double max_abs_diff = 0.0;  // outputs against the cpu backend's
  std::size_t files = 0;      // STONNE files written
};

void print_layer_table(std::ostream& out, const SimulateRun& run, const SimulatedBackend& b);
void print_comparison(std::ostream& out, const std::vector<SimulatedBackend>& results);
nlohmann::json totals_json(const std::vector<SimulatedBackend>& results);
void write_simulation_outputs(const report::RunDirectory& dir, const SimulateRun& run,
                              const std::vector<SimulatedBackend>& results);

}  // namespace telar::cli
