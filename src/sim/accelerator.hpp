#pragma once
// sim::Accelerator: one simulated accelerator (a hardware configuration) that runs operations
// and returns per-operation statistics. The library entry point for the CLI and for backends
// that map whole graphs onto the simulator.
#include <cstdint>
#include <vector>

#include "sim/config.hpp"
#include "sim/engine.hpp"
#include "sim/stats.hpp"
#include "sim/workload.hpp"

namespace telar::sim {

struct RunOptions {
  bool exact_cycle_loop = false;  // step every cycle (the oracle); otherwise skip steady states
  std::uint64_t seed = 1;         // operand values, when none are given
  bool compute_values = true;     // move values through the fabric and check them
};

struct OpResult {
  Stats stats;
  std::vector<float> output;              // the operation's output (telar layout, see DenseData)
  std::uint64_t outputs_from_fabric = 0;  // outputs whose value came out of the simulated fabric
  bool output_checked = false;            // compared with the reference kernel
  bool output_correct = false;            // ... and every element matched exactly
  double max_abs_error = 0.0;
  std::uint64_t simulated_cycles = 0;  // cycles stepped (fast mode skips the rest)
  int skips = 0;
  std::uint64_t reconfigurations = 0;  // sparse controllers: fabric configurations used
  double seconds = 0.0;                // wall time of the simulation
};

class Accelerator {
 public:
  explicit Accelerator(HardwareConfig config);  // validates the configuration
  const HardwareConfig& config() const { return config_; }

  // Simulates one dense operation with operand values from options.seed.
  OpResult run(const DenseOp& op, const Tile& tile, const RunOptions& options = {}) const;
  // ... with given operands (telar layouts, see DenseData).
  OpResult run(const DenseOp& op, const Tile& tile, const DenseData& data,
               const RunOptions& options) const;
  // Timing and traffic only (no values): what the mapper searches with.
  Stats estimate(const DenseOp& op, const Tile& tile) const;

  // MAGMA_SPARSE_DENSE: CSR sparse × dense. Values move through the fabric when the dense
  // operand is given and options.compute_values is set; outputs are M×N, row-major.
  OpResult run(const SparseDenseOp& op, const SparseDenseTile& tile,
               const RunOptions& options = {}) const;
  // SIGMA_SPARSE_GEMM: bitmap sparse × sparse.
  OpResult run(const SparseGemmOp& op, const RunOptions& options = {}) const;

 private:
  OpResult simulate(const DenseOp& op, const Tile& tile, const DenseData* data,
                    const RunOptions& options) const;
  HardwareConfig config_;
};

}  // namespace telar::sim
