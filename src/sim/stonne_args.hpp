#pragma once
// STONNE's command-line syntax (`-DenseGEMM -M=20 -N=20 -K=256 -num_ms=256 -dn_bw=64 ...`),
// parsed into a configuration, an operation and a tile, with STONNE's defaults.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/config.hpp"
#include "sim/workload.hpp"

namespace telar::sim {

struct StonneCommand {
  DenseOp op;
  HardwareConfig hw;                         // STONNE's defaults plus the hardware flags given
  std::set<std::string> hw_flags;            // hardware flags given (-num_ms, -dn_bw, ...)
  Tile tile;                                 // STONNE's defaults plus the tile flags given
  bool tile_given = false;                   // at least one -T_* flag
  std::optional<std::string> generate_tile;  // -generate_tile=performance|energy|edp
  bool print_stats = true;
};

// `args` starts with the operation flag (-CONV, -FC, -DenseGEMM). Errors name the flag.
StonneCommand parse_stonne_args(const std::vector<std::string>& args);

// Applies the hardware flags of `cmd` on top of `base` (a configuration file), so that
// `--config FILE -dn_bw=32` changes only dn_bw.
HardwareConfig merge_hardware(const HardwareConfig& base, const StonneCommand& cmd);

// The command in STONNE's syntax (for logs and the JSON record).
std::string stonne_command_line(const HardwareConfig& hw, const DenseOp& op, const Tile& tile);

}  // namespace telar::sim
