#pragma once
// The cycle-level engines behind sim::Accelerator. Each moves packets through a model of the
// fabric cycle by cycle, in STONNE's component order (memory controller, collection bus,
// reduction network, lookup table, multipliers, distribution network), with STONNE's
// connection semantics. In fast mode the engine watches for a repeating steady state of the
// tile loop (the whole fabric state, without data values, equal at two loop points) and skips
// the repetitions exactly: cycles and activity counters advance by whole periods.
#include <cstdint>
#include <vector>

#include "sim/config.hpp"
#include "sim/sparse_workload.hpp"
#include "sim/stats.hpp"
#include "sim/workload.hpp"

namespace telar::sim {

// Operand values in telar's layouts: input[((n·X + x)·Y + y)·C + c], weights[((k·R + r)·S + s)·
// (C/G) + c] with k over all K filters, output[((n·X' + x)·Y' + y)·K + k]. For FC/DenseGEMM
// this is MK (M×K), KN stored as N×K, and the M×N result.
struct DenseData {
  std::vector<float> input, weights;
};

struct EngineRun {
  std::uint64_t cycles = 0;
  GlobalBufferTraffic gb;  // as the engine counted it (closed form after a skip)
  std::uint64_t multiplications = 0;
  CountersFile counters;
  std::vector<float> output;              // values that came out of the fabric
  std::vector<std::uint8_t> from_fabric;  // per output: its final value came out of the fabric
  bool output_from_fabric = false;        // every output value travelled through the model
  std::uint64_t simulated_cycles = 0;     // cycles actually stepped (== cycles without skips)
  int skips = 0;                          // steady-state fast-forwards taken
  std::uint64_t reconfigurations = 0;     // sparse controllers: fabric configurations used
};

struct EngineOptions {
  bool fast = true;                 // false: the plain cycle loop (the oracle)
  const DenseData* data = nullptr;  // null: timing and counts only
};

EngineRun run_maeri(const HardwareConfig& hw, const DenseOp& op, const Tile& tile,
                    const EngineOptions& options);
EngineRun run_mesh(const HardwareConfig& hw, const DenseOp& op, const Tile& tile,
                   const EngineOptions& options);

struct SparseEngineOptions {
  bool fast = true;    // MAGMA: skip rows already simulated from the same fabric state
  bool values = true;  // move operand values through the fabric
};
// MAGMA_SPARSE_DENSE (LINEAR array, ART, accumulation buffer) and SIGMA_SPARSE_GEMM (LINEAR
// array, ART without accumulation buffer). Outputs are M×N, row-major.
EngineRun run_magma(const HardwareConfig& hw, const SparseDenseOp& op, const SparseDenseTile& tile,
                    const SparseEngineOptions& options);
EngineRun run_sigma(const HardwareConfig& hw, const SparseGemmOp& op,
                    const SparseEngineOptions& options);

// Global Buffer traffic of the MAERI dense controller in closed form (it does not depend on
// timing): what STONNE counts, including its treatment of partial tiles.
GlobalBufferTraffic maeri_traffic(const HardwareConfig& hw, const DenseOp& op, const Tile& tile);
GlobalBufferTraffic mesh_traffic(const HardwareConfig& hw, const DenseOp& op, const Tile& tile);

}  // namespace telar::sim
