#pragma once
// One `telar sim` operation: its arguments parsed (STONNE's flags and telar's own), and the
// simulation run into a directory, without printing, so that a single call and a sweep of
// many cases (sim_sweep.cpp) share both.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "sim/energy.hpp"
#include "sim/report.hpp"
#include "sim/stonne_args.hpp"

namespace telar::cli {

struct SimRequest {
  std::string config_path, tile_arg, out_dir, energy_path, mk_path, kn_path;
  bool json = false, exact = false;
  std::uint64_t seed = 1;
  std::vector<std::string> stonne;  // STONNE's flags, as given
  // The STONNE command (the operation flag may stand anywhere among the flags); throws
  // telar::Error naming a bad flag.
  sim::StonneCommand command() const;
};

// The options of a sweep (sim_sweep.cpp): many cases in one process.
struct SweepFlags {
  std::string cases_path;           // --cases FILE: one command line per line
  std::vector<std::string> sweeps;  // --sweep NAME=V1,V2,... (several: every combination)
  int jobs = 0;                     // --jobs N (0: every core)
  bool any() const { return !cases_path.empty() || !sweeps.empty(); }
};

// Parses `args` (--help excluded). `sweep`, when given, receives --cases, --sweep and --jobs;
// without it they are refused (a sweep's lines cannot start sweeps). Throws telar::Error (one
// line) for unknown or malformed options.
SimRequest parse_sim_request(const Args& args, SweepFlags* sweep = nullptr);

// What one simulation gave.
struct SimOutcome {
  sim::OperationRecord record;
  sim::OperationFiles files;  // written when the command asks for stats (-print_stats=1)
  bool wrote = false;
  std::string summary;  // "telar sim: ... cycles, ..." (one line, no newline)
  std::string tile;     // the tile as text ("" for SIGMA)
  // 0: done; 1: the simulated output differs from the reference (`problem` says why).
  int status = 0;
  std::string problem;
  nlohmann::json json() const;  // what --json prints
};

// Runs `request`, writing its files (if any) into `dir`, which must exist. `table`: the energy
// table. Throws telar::Error for a bad hardware, tile or operand file.
SimOutcome simulate_request(const SimRequest& request, const std::filesystem::path& dir,
                            const sim::EnergyTable& table);

// The energy table `path` names ("" : the built-in one).
sim::EnergyTable energy_table(const std::string& path);

}  // namespace telar::cli
