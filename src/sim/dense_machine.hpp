#pragma once
// What the dense engines (MAERI, the TPU mesh) keep alike: the operation, tile and operands they
// run, the clock and the flat counters, the output values with which of them came out of the
// fabric, and how a run's result is put together.
#include <cstdint>
#include <vector>

#include "sim/engine.hpp"

namespace telar::sim {

// What a dense engine is asked to run: the arguments of run_maeri and run_mesh.
struct DenseJob {
  const HardwareConfig& hw;
  const DenseOp& op;
  const Tile& tile;
  const EngineOptions& options;
};

class DenseMachine {
 protected:
  DenseMachine(const DenseJob& job, std::size_t outputs);

  // The run's result: `gb` is the traffic counted, or its closed form after a skip.
  EngineRun result(std::uint64_t stepped, int skips, const GlobalBufferTraffic& gb,
                   std::uint64_t multiplications, CountersFile counters);

  HardwareConfig hw_;
  DenseOp op_;
  Tile t_;
  const DenseData* data_;
  bool fast_;
  std::uint64_t cycle_ = 0;
  GlobalBufferTraffic gb_;
  std::vector<std::uint64_t> cnt_;  // flat; each engine lays its counters out
  bool values_valid_;               // false once a skip left the fabric's values behind
  std::vector<float> output_;
  std::vector<std::uint8_t> from_fabric_;
};

}  // namespace telar::sim
