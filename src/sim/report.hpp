#pragma once
// The per-operation record and its files: STONNE's JSON stats file and `.counters` file, under
// STONNE's names plus a suffix that keeps concurrent runs in one directory apart.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sim/accelerator.hpp"
#include "sim/energy.hpp"

namespace telar {
class BackgroundWriter;
}

namespace telar::sim {

// A sparse operation's shape and pattern, for the record (the matrices themselves are not kept).
struct SparseOperation {
  std::string kind;  // "SparseDense" (MAGMA) or "SparseGEMM" (SIGMA)
  std::string layer_name;
  int M = 0, N = 0, K = 0;
  std::int64_t mk_nnz = 0, kn_nnz = 0;  // stored entries of MK and KN (K·N for a dense KN)
  SparseDataflow dataflow = SparseDataflow::MkStaKnStr;
  SparseDenseTile tile;                  // SparseDense only
  std::string operands;                  // where the matrices came from
  int mk_sparsity = 0, kn_sparsity = 0;  // the command's percentages (for its STONNE command)
};
SparseOperation describe_operation(const SparseDenseOp& op, const SparseDenseTile& tile,
                                   std::string operands);
SparseOperation describe_operation(const SparseGemmOp& op, std::string operands);

struct OperationRecord {
  HardwareConfig hw;
  std::optional<SparseOperation> sparse;  // set for sparse operations (op and tile unused)
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
// The same, with the writing left to `writer` (the names are chosen and the texts made here).
OperationFiles write_operation_files(const std::filesystem::path& dir,
                                     const OperationRecord& record, BackgroundWriter& writer);

// "CONV R=3 S=3 C=6 K=6 G=1 N=1 X=10 Y=10 stride=1" / "DenseGEMM M=20 N=20 K=256"
std::string describe(const DenseOp& op);
// "SparseDense M=20 N=20 K=256 (1022 non-zeros, 80.0% sparse)"
std::string describe(const SparseOperation& op);
// "LINEAR 256 MS, ASNETWORK, dn_bw 64, rn_bw 64" (+ ", accumulation buffer")
std::string describe(const HardwareConfig& hw);

}  // namespace telar::sim
