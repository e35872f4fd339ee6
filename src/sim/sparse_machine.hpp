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
#include <vector>

#include "core/error.hpp"
#include "sim/engine.hpp"
#include "sim/fabric/collection_bus.hpp"
#include "sim/fabric/link.hpp"
#include "sim/reduce_tree.hpp"
#include "sim/ring.hpp"

namespace telar::sim::sparse {

using namespace fabric;

struct PortPacket {
  Kind kind;
  float value;
  std::uint32_t count;  // destinations, queued in the port's destination ring
};

enum class State : std::uint8_t { Configuring, DistSta, DistStr, Waiting, AllSent };

class SparseMachine {
 public:
  SparseMachine(const HardwareConfig& hw, const SparseEngineOptions& options);
  EngineRun run_magma(const SparseDenseOp& op, const SparseDenseTile& tile);
  EngineRun run_sigma(const SparseGemmOp& op);

 private:
  // --- configuration ---
  HardwareConfig hw_;
  bool fast_, values_;
  int ms_, ports_, per_port_, dn_levels_, lines_, bus_ports_ = 0;
  bool dn_tree_, acc_;

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

  // --- reduction network ---
  ReduceTree tree_;
  BusWiring wiring_;
  int levels_ = 0;
  std::vector<int> node_order_;
  struct Node {
    Link in[2];
    Ring<Psum> left, right, fw;
  };
  std::vector<Node> nd_;
  Link& child_link(int index) { return nd_[index >> 1].in[index & 1]; }
  std::vector<int> node_fw_link_;
  std::vector<std::uint8_t> nd_even_;
  std::vector<Link> fw_link_;
  enum class Out : std::uint8_t { Parent, Lookup, Memory };
  std::vector<Out> nd_out_;
  std::vector<int> nd_out_index_;
  std::vector<int> parent_link_;  // per node: its parent's child-link index (-1 for the root)
  std::vector<int> acc_of_node_;
  std::vector<Psum> out_fw_, out_ps_;
  std::vector<int> configured_sizes_;  // the neuron sizes the tree is compiled for

  // Accumulation buffer.
  std::vector<Link> acc_in_;
  std::vector<Ring<Psum>> acc_fifo_;
  std::vector<Psum> acc_reg_;
  std::vector<int> acc_count_;
  std::vector<int> acc_bus_;
  int acc_folds_ = 1;

  // Collection bus.
  CollectionBus bus_;
  Link lookup_in_, mem_in_;

  // --- controller (shared parts) ---
  State state_ = State::Configuring;
  Ring<Psum> write_fifo_;
  bool execution_finished_ = false;
  std::uint64_t cycle_ = 0;
  std::uint64_t reconfigurations_ = 0;
  std::uint64_t direct_writes_ = 0;  // zero outputs of empty rows, stored without the fabric
  std::vector<float> output_;
  std::vector<std::uint8_t> from_fabric_;

  // --- counters (flat; offsets below) ---
  std::vector<std::uint64_t> cnt_;
  std::size_t c_dn_top_, c_dn_wire_, c_dn_uni_, c_dn_bc_, c_mn_wire_, c_mult_, c_fwd_psum_,
      c_ms_conf_, c_rn_wire_, c_rn_fw_, c_add21_, c_add31_, c_add_conf_, c_acc_wire_, c_acc_rd_,
      c_acc_wr_, c_acc_add_, c_cb_in_, c_cb_out_, c_gb_w_, c_gb_i_, c_gb_pr_, c_gb_pw_, c_end_;

  // --- fabric ---
  void configure(const std::vector<int>& sizes, const std::vector<std::uint8_t>& psum_first,
                 int n_folding);
  void push_to_ports(Kind kind, float value, const int* dests, std::uint32_t count);
  void receive_results();
  void send_ports();
  void deliver(Kind kind, float value, const int* dests, std::uint32_t count);
  void count_dn_route(int port, const int* dests, std::uint32_t count);
  void bus_cycle();
  void accumulator_cycle(int k);
  void node_cycle(int id);
  void multiplier_cycle(int i);
  void fabric_cycle();
  bool idle() const;
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
