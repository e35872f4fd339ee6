#pragma once
// The per-operation record and its files: STONNE's JSON stats file and `.counters` file, under
// STONNE's names plus a suffix that keeps concurrent runs in one directory apart.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/accelerator.hpp"
#include "sim/energy.hpp"

namespace telar::sim {

struct OperationRecord {
  HardwareConfig hw;
  DenseOp op;
  Tile tile;
  std::string tile_source;  // "command line", "tile file PATH", "mapper (performance)"
  OpResult result;
  EnergyBreakdown energy;
  bool exact_cycle_loop = false;
};

nlohmann::json stats_json(const OperationRecord& record);

struct OperationFiles {
  std::filesystem::path stats, counters;
};
// Writes both files into `dir` (atomically, never overwriting an existing file).
OperationFiles write_operation_files(const std::filesystem::path& dir,
                                     const OperationRecord& record);

// "CONV R=3 S=3 C=6 K=6 G=1 N=1 X=10 Y=10 stride=1" / "DenseGEMM M=20 N=20 K=256"
std::string describe(const DenseOp& op);
// "LINEAR 256 MS, ASNETWORK, dn_bw 64, rn_bw 64" (+ ", accumulation buffer")
std::string describe(const HardwareConfig& hw);

}  // namespace telar::sim
