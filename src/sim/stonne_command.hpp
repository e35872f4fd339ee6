#pragma once
// A command of STONNE's syntax (stonne_args.hpp) simulated below `telar sim`: the tile of a
// dense operation, the operands of a sparse one (-SparseDense, -SparseGEMM), and the run.
// Operands: Matrix Market files where given (their shapes checked against the -M/-N/-K given),
// otherwise STONNE's random matrices drawn as its command line draws them: glibc's rand()
// seeded with `seed`, MK first, then KN. `source` receives a few words on where they came from.
#include <cstdint>
#include <optional>
#include <string>

#include "sim/accelerator.hpp"
#include "sim/energy.hpp"
#include "sim/report.hpp"
#include "sim/sparse_workload.hpp"
#include "sim/stonne_args.hpp"

namespace telar::sim {

struct SparseOperandSources {
  std::string mk_path, kn_path;  // "" : random
  std::uint64_t seed = 1;        // of rand(): at most 4294967295
};

SparseDenseOp sparse_dense_operands(const SparseArgs& args, const SparseOperandSources& sources,
                                    std::string& source);
SparseGemmOp sparse_gemm_operands(const SparseArgs& args, const SparseOperandSources& sources,
                                  std::string& source);

// Runs the command on `accelerator` (its hardware, merged with the command's): the tile of
// -SparseDense from the command, or chosen by the mapper for `auto_objective` (performance,
// energy, edp); the energy from `table`.
OperationRecord simulate_sparse_command(const Accelerator& accelerator, const StonneCommand& cmd,
                                        const SparseOperandSources& sources,
                                        const std::optional<std::string>& auto_objective,
                                        bool exact_cycle_loop, const EnergyTable& table);

// The tile of a dense command: its -T_* flags (or STONNE's defaults), a tile file, or the
// mapper's choice for `tile_arg` auto[:objective] or -generate_tile; checked against the
// hardware. `source` says which.
struct DenseTileChoice {
  Tile tile;
  std::string source;
};
DenseTileChoice choose_dense_tile(const Accelerator& accelerator, const StonneCommand& cmd,
                                  const std::string& tile_arg);

OperationRecord simulate_dense_command(const Accelerator& accelerator, const StonneCommand& cmd,
                                       const DenseTileChoice& tile, bool exact_cycle_loop,
                                       std::uint64_t seed, const EnergyTable& table);

}  // namespace telar::sim
