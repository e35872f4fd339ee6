#include "sim/dense_machine.hpp"

#include <utility>

namespace telar::sim {

DenseMachine::DenseMachine(const HardwareConfig& hw, const DenseOp& op, const Tile& tile,
                           const EngineOptions& options, std::size_t outputs)
    : hw_(hw),
      op_(op),
      t_(tile),
      data_(options.data),
      fast_(options.fast),
      values_valid_(options.data != nullptr) {
  if (data_) {
    output_.assign(outputs, 0.0f);
    from_fabric_.assign(outputs, 0);
  }
}

EngineRun DenseMachine::result(std::uint64_t stepped, int skips, const GlobalBufferTraffic& gb,
                               std::uint64_t multiplications, CountersFile counters) {
  EngineRun out{.cycles = cycle_,
                .gb = gb,
                .multiplications = multiplications,
                .counters = std::move(counters),
                .output = {},
                .from_fabric = {},
                .output_from_fabric = values_valid_,
                .simulated_cycles = stepped,
                .skips = skips,
                .reconfigurations = 0};
  if (data_) {
    out.output = std::move(output_);
    out.from_fabric = std::move(from_fabric_);
  }
  return out;
}

}  // namespace telar::sim
