// telar sim energy: energy and area of STONNE .counters files, as STONNE's calculate_energy.py
// computes them (reached through `telar sim energy`).
#include <fmt/format.h>

#include <iostream>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "sim/energy.hpp"
#include "sim/stats.hpp"

namespace telar::cli {

namespace {

constexpr const char* kEnergyUsage =
    "usage: telar sim energy --table FILE [--json] COUNTERS...\n\n"
    "Energy and area from STONNE .counters files, as STONNE's calculate_energy.py computes them:\n"
    "dynamic = sum of count x energy per operation, static = STATIC x CYCLES per component\n"
    "instance, area = sum of AREA. configs/energy_model.txt holds the seed's table.\n";

}  // namespace

int run_sim_energy(const Args& args) {
  std::string table_path;
  bool json = false;
  std::vector<std::string> files;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::cout << kEnergyUsage;
      return 0;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--table" || a.rfind("--table=", 0) == 0) {
      if (a == "--table") {
        require(i + 1 < args.size(), "--table needs a file; see `telar sim energy --help`");
        table_path = args[++i];
      } else {
        table_path = a.substr(8);
      }
    } else if (a.rfind("-table_file=", 0) == 0) {  // calculate_energy.py's spelling
      table_path = a.substr(12);
    } else if (a.rfind("-counter_file=", 0) == 0) {
      files.push_back(a.substr(14));
    } else if (!a.empty() && a[0] == '-') {
      fail("unknown option '{}'; see `telar sim energy --help`", a);
    } else {
      files.push_back(a);
    }
  }
  require(!files.empty(), "give one or more .counters files; see `telar sim energy --help`");
  const sim::EnergyTable table =
      table_path.empty() ? sim::default_energy_table() : sim::load_energy_table(table_path);
  nlohmann::json out = nlohmann::json::array();
  double total = 0;
  for (const std::string& f : files) {
    const sim::CountersFile counters = sim::parse_counters(read_file(f), f);
    const sim::EnergyBreakdown e = sim::compute_energy(table, counters);
    total += e.total();
    std::cout << fmt::format(
        "{}: cycles {}, static {:.6g}, dynamic {:.6g}, total {:.6g}, area {:.6g}\n", f,
        counters.cycles, e.static_energy, e.dynamic_energy, e.total(), e.area);
    for (const auto& part : e.sections)
      std::cout << fmt::format("  [{}] static {:.6g}, dynamic {:.6g}, area {:.6g}\n", part.section,
                               part.static_energy, part.dynamic_energy, part.area);
    out.push_back({{"file", f},
                   {"cycles", counters.cycles},
                   {"static", e.static_energy},
                   {"dynamic", e.dynamic_energy},
                   {"total", e.total()},
                   {"area", e.area}});
  }
  if (json) print_json({{"files", out}, {"total_energy", total}});
  return 0;
}

}  // namespace telar::cli
