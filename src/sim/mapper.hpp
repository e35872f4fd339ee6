#pragma once
// Tile selection: the legal tiles of an operation on a configuration, and a search that picks
// one by simulating candidates with the fast engine.
#include <string_view>
#include <vector>

#include "sim/accelerator.hpp"

namespace telar::sim {

enum class MapObjective { Performance, Energy, Edp };
MapObjective parse_objective(std::string_view text, std::string_view what);
std::string_view name(MapObjective objective);

// Every legal tile the mapper considers: each tile dimension divides its layer dimension or is
// a power of two (so partial tiles stay rare), within the multiplier budget.
std::vector<Tile> candidate_tiles(const HardwareConfig& hw, const DenseOp& op);

struct MapChoice {
  Tile tile;
  Stats stats;
  OpResult result;      // the best candidate's simulation (timing only, no values)
  double energy = 0.0;  // with the built-in energy table
  double score = 0.0;   // the objective's value (lower is better)
  int evaluated = 0;    // candidates simulated
};
// How many candidates the search simulates: the best-ranked ones, plus the best-ranked ones
// without folding among the rest.
struct MapBudget {
  int ranked = 24;
  int unfolded = 8;
  // Tiles over the batch of a convolution (T_N > 1). The reference figures cover T_N = 1 only,
  // and with T_N > 1, T_G > 1 and folded neurons the engine loses outputs (its value check
  // fails), so a whole-model run leaves them out.
  bool batch_tiles = true;
};
// Searches the candidates: ranks them with a cheap bound, simulates the most promising ones
// with the fast engine, and returns the best by the objective.
MapChoice map_tile(const Accelerator& accelerator, const DenseOp& op, MapObjective objective,
                   const MapBudget& budget = {});
double objective_score(MapObjective objective, const Stats& stats, double energy);

// MAGMA_SPARSE_DENSE: tiles T_N (output columns, powers of two up to N, and N itself) times
// T_K (powers of two, and the largest that fills the array), each simulated (timing only, with
// rows of equal length simulated once), best by the objective.
struct SparseDenseChoice {
  SparseDenseTile tile;
  Stats stats;
  double energy = 0.0, score = 0.0;
  int evaluated = 0;
};
SparseDenseChoice map_sparse_dense_tile(const Accelerator& accelerator, const SparseDenseOp& op,
                                        MapObjective objective);

// A legal tile found without simulation (used to suggest one in error messages).
Tile suggest_legal_tile(const HardwareConfig& hw, const DenseOp& op);

}  // namespace telar::sim
