#pragma once
// STONNE's command-line syntax (`-DenseGEMM -M=20 -N=20 -K=256 -num_ms=256 -dn_bw=64 ...`),
// parsed into a configuration, an operation and a tile, with STONNE's defaults.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/config.hpp"
#include "sim/sparse_workload.hpp"
#include "sim/workload.hpp"

namespace telar::sim {

enum class CommandKind { Dense, SparseDense, SparseGemm };

// -SparseDense / -SparseGEMM: the operation's shape and STONNE's random pattern parameters.
struct SparseArgs {
  std::string layer_name;
  int M = 0, N = 0, K = 0;
  int mk_sparsity = 0, kn_sparsity = 0;  // percent, 0..100
  SparseDataflow dataflow = SparseDataflow::MkStaKnStr;
  SparseDenseTile tile;
  std::set<std::string> dims_given;  // -M, -N, -K given explicitly
};

struct StonneCommand {
  CommandKind kind = CommandKind::Dense;
  SparseArgs sparse;  // for the sparse kinds (op and tile then unused)
  DenseOp op;
  HardwareConfig hw;                         // STONNE's defaults plus the hardware flags given
  std::set<std::string> hw_flags;            // hardware flags given (-num_ms, -dn_bw, ...)
  Tile tile;                                 // STONNE's defaults plus the tile flags given
  bool tile_given = false;                   // at least one -T_* flag
  std::optional<std::string> generate_tile;  // -generate_tile=performance|energy|edp
  bool print_stats = true;
};

// `args` starts with the operation flag (-CONV, -FC, -DenseGEMM, -SparseDense, -SparseGEMM).
// Errors name the flag. The sparse operations default to their controllers (MAGMA_SPARSE_DENSE
// with the accumulation buffer, SIGMA_SPARSE_GEMM), as STONNE does.
StonneCommand parse_stonne_args(const std::vector<std::string>& args);

// Applies the hardware flags of `cmd` on top of `base` (a configuration file), so that
// `--config FILE -dn_bw=32` changes only dn_bw.
HardwareConfig merge_hardware(const HardwareConfig& base, const StonneCommand& cmd);

// The command in STONNE's syntax (for logs and the JSON record).
std::string stonne_command_line(const HardwareConfig& hw, const DenseOp& op, const Tile& tile);
std::string stonne_command_line(const HardwareConfig& hw, const SparseArgs& args, CommandKind kind);

}  // namespace telar::sim
