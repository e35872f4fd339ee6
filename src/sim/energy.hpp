#pragma once
// Table-based energy and area, as STONNE's calculate_energy.py computes them: every counter
// line of a `.counters` file is one component instance; it adds its AREA, STATIC × CYCLES of
// static energy, and Σ count × energy-per-operation of dynamic energy.
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/stats.hpp"

namespace telar::sim {

struct EnergyTable {
  // component -> operation (or AREA, STATIC) -> value
  std::map<std::string, std::map<std::string, double>> entries;
};
EnergyTable parse_energy_table(std::string_view text, std::string_view origin);
EnergyTable load_energy_table(const std::filesystem::path& path);
// The table shipped in configs/energy_model.txt (the seed's values), built in.
const EnergyTable& default_energy_table();

struct EnergyBreakdown {
  struct Part {
    std::string section;
    double static_energy = 0, dynamic_energy = 0, area = 0;
  };
  std::vector<Part> sections;
  double static_energy = 0, dynamic_energy = 0, area = 0;
  double total() const { return static_energy + dynamic_energy; }
};
// Throws telar::Error naming the line when a component or operation is not in the table.
EnergyBreakdown compute_energy(const EnergyTable& table, const CountersFile& counters);

}  // namespace telar::sim
