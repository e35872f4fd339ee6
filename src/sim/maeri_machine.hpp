#pragma once
// The MAERI dense engine: LINEAR multiplier array, ART or FEN reduction, optional
// accumulation buffer, MAERI_DENSE_WORKLOAD controller. The machine (this header) is built and
// stepped cycle by cycle in maeri_machine.cpp; maeri.cpp runs it, skipping repeated steady
// states in fast mode.
//
// Timing rules (STONNE's, which the reference figures depend on):
//  * Each cycle runs: controller, collection bus, reduction network (accumulators first, then
//    adder switches from the root down), lookup table, multipliers (0..n-1), distribution tree.
//  * A link holds one batch; a sender overwrites it, the receiver takes it when it runs. So a
//    value moves one hop per cycle when the receiver runs before the sender in the cycle order,
//    and within the same cycle otherwise (e.g. controller -> multiplier when a read port feeds
//    a single multiplier and there is no distribution switch in between).
//  * The controller emits one fold step per cycle into per-port FIFOs and each read port sends
//    one packet per cycle (partial sums first). Packets of a new output-channel iteration wait
//    until every output of the previous iterations has been written.
//  * The controller drains only half of its write FIFO per cycle (it pops while the loop index
//    is below the shrinking size), which shows in the cycle counts.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"
#include "sim/dense_machine.hpp"
#include "sim/engine.hpp"
#include "sim/fabric/accumulation_buffer.hpp"
#include "sim/fabric/collection_bus.hpp"
#include "sim/fabric/counters.hpp"
#include "sim/fabric/distribution_tree.hpp"
#include "sim/fabric/link.hpp"
#include "sim/fabric/reduction_network.hpp"
#include "sim/reduce_tree.hpp"
#include "sim/ring.hpp"

namespace telar::sim::maeri {

using namespace fabric;

struct ValueLink {
  bool pending = false;
  float value = 0;
};

// A packet leaving a read port: its destinations point into an immutable template (or, for a
// partial sum, at the port's own one-element slot).
struct Outgoing {
  Kind kind;
  float value;
  std::uint32_t count;
  const int* dests;
};

class MaeriMachine : DenseMachine {
 public:
  explicit MaeriMachine(const DenseJob& job);
  EngineRun run();

 private:
  // --- configuration ---
  TileGeometry g_;
  int R_, S_, Cg_, Kg_, G_, N_, Xo_, Yo_, stride_;
  int ms_, per_port_, ports_;
  DistributionTree dn_;
  int window_, shift_;
  long long per_channel_, total_outputs_;
  int vnat_psums_;  // psums per output the controller sends back (folding), else 1

  // --- distribution network ---
  // The controller emits one fold step per cycle. Rather than materialising its packets in the
  // port FIFOs, it records the step; each port walks the steps in order and builds a packet only
  // when it sends it. The order and content per port are those of STONNE's FIFOs.
  struct Step {
    std::uint8_t tmpl;  // 0: weights, 1: inputs (whole window), 2: inputs (newest column)
    long long iter;     // output-channel iteration (the gate)
    int idxN, idxG, idxK, idxX, idxY, idxC, idxR, idxS;
  };
  std::vector<Step> steps_;
  long long steps_base_ = 0;  // absolute index of steps_[0]
  struct Cursor {
    long long step = 0;     // absolute step index
    std::uint32_t pos = 0;  // next part of this port within the step
  };
  std::vector<Cursor> cursor_;
  std::vector<Ring<PortPacket>> port_psum_;
  // Ports that send parts of some template (the others never send a step's packet), the
  // oldest and newest of their cursors after the last send_ports(), and the first step that
  // must not be forgotten (a backlog mark still refers to it; -1: none).
  std::vector<std::uint8_t> port_relevant_;
  long long oldest_relevant_ = 0, newest_relevant_ = 0;
  long long keep_from_ = -1;
  std::vector<bool> latch_full_;
  std::vector<Outgoing> latch_;
  std::vector<int> latch_psum_dest_;

  // --- multipliers ---
  std::vector<int> ms_vn_, ms_nf_;
  std::vector<std::uint8_t> ms_fwd_psum_, ms_fw_send_, ms_fw_recv_;
  std::vector<int> ms_fold_, ms_win_;
  std::vector<Ring<Act>> ms_act_;
  std::vector<Ring<float>> ms_fwin_;
  std::vector<Ring<float>> ms_w_;
  std::vector<MsInput> ms_in_;
  std::vector<ValueLink> ms_fw_link_;  // link i: multiplier i+1 -> multiplier i
  int n_windows_;

  // --- reduction network, accumulation buffer (ART only) ---
  BusWiring wiring_;
  ReductionNetwork rn_;
  bool acc_;
  AccumulationBuffer acc_buf_;

  // Collection bus.
  int lines_, bus_ports_;
  CollectionBus bus_;
  std::vector<std::vector<int>> bus_line_sources_;  // per line, inputs some result may use
  Link mem_in_;

  // --- memory controller ---
  int cN_ = 0, cG_ = 0, cK_ = 0, cX_ = 0, cY_ = 0, cR_ = 0, cS_ = 0, cC_ = 0;
  bool weights_done_ = false, input_finished_ = false, finished_ = false;
  long long opix_ = 0;
  Ring<Psum> write_fifo_;
  std::vector<long long> vnat_count_;
  std::vector<int> vnat_psum_;
  std::uint64_t gate_stalls_ = 0;  // cycles the controller waited for a previous iteration

  // --- counters (in cnt_) ---
  LinearArrayCounters array_;
  std::size_t c_psum_to_, c_end_;

  // --- packet templates ---
  struct TemplatePart {
    int port;
    std::uint32_t count, begin;  // destinations in `dests`
  };
  struct TemplatePacket {
    int a, b, c, d, e;  // weights: g, k, c, r, s; inputs: x, y, n, g, c
    std::uint32_t first_part, part_count;
  };
  struct Template {
    std::vector<TemplatePacket> packets;
    std::vector<TemplatePart> parts;
    std::vector<int> dests;
    // Per port, in emission order: (packet, part) pairs.
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> by_port;
  };
  Template weight_template_;
  Template input_template_[2];
  void build_templates();
  const Template& step_template(const Step& st) const {
    return st.tmpl == 0 ? weight_template_ : input_template_[st.tmpl - 1];
  }
  float step_value(const Step& st, const TemplatePacket& tp) const;
  void record_step(std::uint8_t tmpl, long long iter);

  // --- scratch ---
  std::vector<std::vector<int>> dest_scratch_;

  void build_reduction(CounterLayout& layout);
  void build_multipliers();

  void step();
  void memory_cycle();
  void generate_weights();
  void generate_inputs();
  void advance_inputs();
  void process_writes();
  void send_ports();
  void deliver(const Outgoing& p);
  std::size_t part_base_[3] = {0, 0, 0};  // counter index of each template's first part
  void bus_cycle();
  void reduction_cycle();
  void multiplier_cycle(int i);
  void distribution_cycle();

  long long threshold(long long iteration_index) const;
  long long point_index() const;
  bool at_point() const;
  // The fabric state without data values. `full` lists every queued packet; otherwise a port
  // queue is summarised (a fingerprint for spotting candidates, confirmed with the full state).
  void canonical_state(std::vector<std::uint64_t>& out, bool full) const;
  // Appends everything downstream of the steps queue: port partial sums, multipliers, adders,
  // accumulators, collection bus, and the controller's write side.
  void fabric_state(std::vector<std::uint64_t>& out) const;
  // The controller's emission side (what generate_weights/generate_inputs change).
  struct ControllerState {
    int n, g, k, x, y, r, s, c;
    bool weights_done, input_finished;
    GlobalBufferTraffic gb;
    std::uint64_t stalls;
    std::size_t steps;
  };
  ControllerState controller_state() const;
  void restore_controller(const ControllerState& c);
  // Runs the controller's emission alone for `cycles` cycles, knowing only that the output
  // count stays within [opix_lo, opix_hi] meanwhile; false (part done) where the iteration
  // gate's answer would depend on the exact count.
  bool replay_controller(long long cycles, long long opix_lo, long long opix_hi);
  void jump(long long to_point, long long periods, std::uint64_t d_cycles,
            const std::vector<std::uint64_t>& d_counters, long long d_opix,
            const std::vector<long long>& d_vnat);

  [[noreturn]] void mixed_neurons() const {
    fail(
        "tile {} makes two virtual neurons meet in one adder or accumulator, which would add "
        "their partial sums together (STONNE aborts on this mapping); map at least two "
        "multipliers per virtual neuron (T_R*T_S*T_C >= 2)",
        describe(t_, op_.kind));
  }
  float input_value(int n, int row, int col, int ch) const;
  float weight_value(int gk, int r, int s, int c) const;
  CountersFile counters_file(const GlobalBufferTraffic& gb) const;
};

}  // namespace telar::sim::maeri
