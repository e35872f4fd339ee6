#include "sim/dense_machine.hpp"

#include <utility>

namespace telar::sim {

DenseMachine::DenseMachine(const DenseJob& job, std::size_t outputs)
    : hw_(job.hw),
      op_(job.op),
      t_(job.tile),
      data_(job.options.data),
      fast_(job.options.fast),
      values_valid_(job.options.data != nullptr) {
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
