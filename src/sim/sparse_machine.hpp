#pragma once
// The fabric of the sparse engines (magma.cpp: STONNE's MAGMA_SPARSE_DENSE controller;
// sigma.cpp: SIGMA_SPARSE_GEMM): the LINEAR multiplier array and the ART reduction network
// (with the accumulation buffer for MAGMA), stepped by sparse_machine.cpp.
//
// The fabric follows the dense engine's timing rules (see maeri.cpp): the components run in
// STONNE's order each cycle, a link holds one batch, the controller drains half of its write
// FIFO per cycle, each read port sends one packet per cycle with partial sums first. What the
// sparse controllers add:
//  * They reconfigure the fabric between phases (a row of the sparse matrix for MAGMA, a set of
//    clusters for SIGMA), once the previous phase's outputs have all come back; a
//    reconfiguration empties the multipliers (their weight FIFOs included) and the adders.
//  * A read and the packet it fills enter the port FIFO in the same cycle, padding (zeros the
//    controller sends without a read) the same way; the run ends in the cycle the last output
//    reaches the controller. (The memory model in STONNE's newest sources answers loads one
//    cycle later and adds a store drain; the reference figures, taken with STONNE's command
//    line, follow the timing here exactly.)
//  * What each controller does with it: magma.cpp and sigma.cpp.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/error.hpp"
#include "sim/engine.hpp"
#include "sim/fabric/accumulation_buffer.hpp"
#include "sim/fabric/collection_bus.hpp"
#include "sim/fabric/controller_state.hpp"
#include "sim/fabric/counters.hpp"
#include "sim/fabric/distribution_tree.hpp"
#include "sim/fabric/link.hpp"
#include "sim/fabric/reduction_network.hpp"
#include "sim/reduce_tree.hpp"
#include "sim/ring.hpp"
#include "sim/steady_state.hpp"

namespace telar::sim::sparse {

using namespace fabric;

struct PortPacket {
  Kind kind;
  float value;
  std::uint32_t count;  // destinations, queued in the port's destination ring
};

using State = fabric::ControllerState;

class SparseMachine {
 public:
  SparseMachine(const HardwareConfig& hw, const SparseEngineOptions& options);
  EngineRun run_magma(const SparseDenseOp& op, const SparseDenseTile& tile);
  EngineRun run_sigma(const SparseGemmOp& op);

 private:
  // --- configuration ---
  HardwareConfig hw_;
  bool fast_, values_;
  int ms_, ports_, per_port_, lines_, bus_ports_ = 0;
  bool acc_;
  DistributionTree dn_;

  // --- distribution: port FIFOs, latches ---
  std::vector<Ring<PortPacket>> in_fifo_, psum_fifo_;
  std::vector<Ring<int>> in_dests_, psum_dests_;
  std::vector<std::uint8_t> latch_full_;
  std::vector<Kind> latch_kind_;
  std::vector<float> latch_value_;
  std::vector<std::vector<int>> latch_dests_;

  // --- multipliers ---
  std::vector<int> ms_vn_, ms_nf_;
  std::vector<std::uint8_t> ms_direct_;  // forwards the partial sum it receives (SIGMA folds)
  std::vector<Ring<Act>> ms_act_;
  std::vector<Ring<float>> ms_w_;
  std::vector<MsInput> ms_in_;

  // --- reduction network, accumulation buffer (MAGMA) ---
  BusWiring wiring_;
  ReductionNetwork rn_;
  std::vector<int> configured_sizes_;  // the neuron sizes the tree is compiled for
  AccumulationBuffer acc_buf_;
  int acc_folds_ = 1;

  // Collection bus.
  CollectionBus bus_;
  Link mem_in_;

  // --- controller (shared parts) ---
  State state_ = State::Configuring;
  Ring<Psum> write_fifo_;
  bool execution_finished_ = false;
  std::uint64_t cycle_ = 0;
  std::uint64_t reconfigurations_ = 0;
  std::uint64_t direct_writes_ = 0;  // zero outputs of empty rows, stored without the fabric
  std::vector<float> output_;
  std::vector<std::uint8_t> from_fabric_;
  bool values_valid_ = true;  // false once a skip has left the fabric's values behind

  // --- fast mode: phases (a MAGMA row, a SIGMA configuration) that start on an idle fabric ---
  // What such a phase does depends only on its own description and on where the bus arbiters
  // stand when it starts; a phase seen before is skipped with its recorded effect.
  struct PhaseEffect {
    std::uint64_t cycles;
    std::vector<std::uint64_t> d_counters;
    std::vector<int> bus_rr_after;
  };
  struct PhaseRecording {
    std::uint64_t key;
    std::vector<std::uint64_t> state;
    std::uint64_t cycle;
    std::vector<std::uint64_t> counters;
  };
  StateMemory<PhaseEffect> phases_{0x5c};
  std::optional<PhaseRecording> recording_;
  // At the start of a phase on an idle fabric described by `words`: the effect of an earlier
  // phase in the same state, applied (cycles, counters, arbiters, one reconfiguration); or null,
  // and this phase is recorded until end_phase().
  const PhaseEffect* repeat_phase(std::vector<std::uint64_t> words);
  void end_phase();  // a phase ends here (called at every phase start)

  // --- counters (flat; offsets below) ---
  std::vector<std::uint64_t> cnt_;
  LinearArrayCounters array_;
  std::size_t c_gb_w_, c_gb_i_, c_gb_pr_, c_gb_pw_;

  // --- fabric ---
  void configure(const std::vector<int>& sizes, const std::vector<std::uint8_t>& psum_first,
                 int n_folding);
  void push_to_ports(Kind kind, float value, const int* dests, std::uint32_t count);
  void receive_results();
  void send_ports();
  void deliver(Kind kind, float value, const int* dests, std::uint32_t count);
  void multiplier_cycle(int i);
  // The read ports send, then the fabric runs its cycle; true once the run has finished.
  bool fabric_cycle();
  bool idle() const;
  // Everything in flight on the fabric and in the controller's write FIFO, without data values
  // (the steady-state skipper's view; the configuration is not included).
  void fabric_state(std::vector<std::uint64_t>& out) const;
  CountersFile counters_file() const;
  GlobalBufferTraffic traffic() const {
    return GlobalBufferTraffic{cnt_[c_gb_w_], cnt_[c_gb_i_], cnt_[c_gb_pr_],
                               cnt_[c_gb_pw_] + direct_writes_};
  }
  EngineRun finish(std::uint64_t stepped, int skips);

  [[noreturn]] void internal(const char* what) const {
    fail(
        "internal error in the sparse engine: {} at cycle {}; please report this with the "
        "command line",
        what, cycle_);
  }
};

}  // namespace telar::sim::sparse
