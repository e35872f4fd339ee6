// The MAERI dense engine: LINEAR multiplier array, ART or FEN reduction, optional
// accumulation buffer, MAERI_DENSE_WORKLOAD controller.
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
#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "sim/engine.hpp"
#include "sim/fabric/link.hpp"
#include "sim/reduce_tree.hpp"
#include "sim/ring.hpp"

namespace telar::sim {

namespace {

using namespace fabric;

// A node's outputs of one cycle (a handful of values; reused, never shrunk).
struct OutBuf {
  std::vector<Psum> v = std::vector<Psum>(8);
  std::uint32_t n = 0;
  [[gnu::always_inline]] void push(Psum p) {
    if (n == v.size()) [[unlikely]]
      v.resize(2 * v.size());
    v[n++] = p;
  }
  bool empty() const { return n == 0; }
};

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

struct PsumPacket {
  float value;
  int dest;
};

// A fingerprint of a state vector: only a hint (equal states are confirmed word by word).
std::uint64_t fingerprint(std::uint64_t seed, const std::vector<std::uint64_t>& words) {
  std::uint64_t h = seed ^ 0xcbf29ce484222325ULL;
  for (std::uint64_t w : words) h = (h ^ w) * 0x100000001b3ULL;
  return telar::mix64(h);
}

class MaeriMachine {
 public:
  MaeriMachine(const HardwareConfig& hw, const DenseOp& op, const Tile& tile,
               const EngineOptions& options);
  EngineRun run();

 private:
  // --- configuration ---
  HardwareConfig hw_;
  DenseOp op_;
  Tile t_;
  TileGeometry g_;
  const DenseData* data_;
  bool fast_;
  int R_, S_, Cg_, Kg_, G_, N_, Xo_, Yo_, stride_;
  int ms_, per_port_, ports_, dn_levels_;
  bool dn_tree_;
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
  std::vector<Ring<PsumPacket>> port_psum_;
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

  // --- reduction network ---
  ReduceTree tree_;
  BusWiring wiring_;
  int levels_;
  std::vector<int> node_order_;
  // Per adder switch, everything its cycle touches, together: the links from its children and
  // its FIFOs.
  struct Node {
    Link in[2];  // from the left and right child (switch or multiplier)
    Ring<Psum> left, right, fw, fold;
    Psum fold_reg{0, 0};
    int fold_count = 0;
  };
  std::vector<Node> nd_;
  Link& child_link(int index) { return nd_[index >> 1].in[index & 1]; }
  std::vector<int> node_fw_link_;      // index into fw_link_ or -1
  std::vector<std::uint8_t> nd_even_;  // even position within its level
  std::vector<Link> fw_link_;
  std::vector<std::vector<int>> fold_inputs_;  // FEN: up-links read by each node
  std::vector<Link> up_link_;                  // FEN: one per node
  enum class Out : std::uint8_t { Parent, Lookup, Memory, Fold };
  std::vector<Out> nd_out_;
  std::vector<int> nd_out_index_;  // parent child-link index, or memory link, or up-link
  OutBuf out_fw_, out_ps_;

  // Accumulation buffer (ART only).
  bool acc_;
  std::vector<Link> acc_in_;
  std::vector<Ring<Psum>> acc_fifo_;
  std::vector<Psum> acc_reg_;
  std::vector<int> acc_count_;
  std::vector<int> acc_bus_;  // bus input link fed by accumulator k

  // Collection bus.
  int lines_, bus_ports_;
  std::vector<Link> bus_in_;
  std::vector<Ring<Psum>> bus_fifo_;
  std::vector<int> bus_rr_;
  std::vector<long long> bus_queued_;               // items waiting in each line's FIFOs
  std::vector<std::vector<int>> bus_line_sources_;  // per line, inputs some result may use
  std::vector<Link> bus_out_;
  Link lookup_in_, mem_in_;

  // --- memory controller ---
  int cN_ = 0, cG_ = 0, cK_ = 0, cX_ = 0, cY_ = 0, cR_ = 0, cS_ = 0, cC_ = 0;
  bool weights_done_ = false, input_finished_ = false, finished_ = false;
  long long opix_ = 0;
  Ring<Psum> write_fifo_;
  std::vector<long long> vnat_count_;
  std::vector<int> vnat_psum_;
  std::uint64_t cycle_ = 0;
  std::uint64_t gate_stalls_ = 0;  // cycles the controller waited for a previous iteration

  // --- values ---
  bool values_valid_;
  std::vector<float> output_;
  std::vector<std::uint8_t> from_fabric_;

  // --- counters ---
  GlobalBufferTraffic gb_;
  std::vector<std::uint64_t> cnt_;  // flat; offsets below
  std::size_t c_dn_top_, c_dn_wire_, c_dn_uni_, c_dn_bc_, c_mn_wire_, c_mult_, c_fwd_psum_,
      c_rn_wire_, c_rn_fw_, c_rn_up_, c_add21_, c_add31_, c_acc_wire_, c_acc_rd_, c_acc_wr_,
      c_acc_add_, c_cb_in_, c_cb_out_, c_psum_to_, c_end_;

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

  void build_reduction();
  void build_multipliers();

  void step();
  void memory_cycle();
  void generate_weights();
  void generate_inputs();
  void advance_inputs();
  void process_writes();
  void send_ports();
  void deliver(const Outgoing& p);
  // Adds `times` routings of a packet to `dests` through port's tree to the DN counters.
  void count_dn_route(int port, const int* dests, std::uint32_t count, std::uint64_t times,
                      std::vector<std::uint64_t>& dn) const;
  std::size_t part_base_[3] = {0, 0, 0};  // counter index of each template's first part
  void bus_cycle();
  void reduction_cycle();
  void accumulator_cycle(int k);
  void node_cycle(int id);
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

MaeriMachine::MaeriMachine(const HardwareConfig& hw, const DenseOp& op, const Tile& tile,
                           const EngineOptions& options)
    : hw_(hw), op_(op), t_(tile), data_(options.data), fast_(options.fast) {
  g_ = tile_geometry(hw, op, tile);
  R_ = op.R, S_ = op.S, Cg_ = op.c_per_group(), Kg_ = op.k_per_group(), G_ = op.G, N_ = op.N;
  Xo_ = op.out_x(), Yo_ = op.out_y(), stride_ = op.stride;
  ms_ = hw.ms_size;
  ports_ = hw.dn_bw;
  per_port_ = ms_ / ports_;
  dn_levels_ = log2_of(per_port_);
  dn_tree_ = per_port_ > 1;
  shift_ = g_.folding ? 1 : 0;
  window_ = t_.T_R * t_.T_S * t_.T_C + shift_;
  const int vnat_iters = g_.folding ? g_.n_folding : 1;
  vnat_psums_ = vnat_iters;
  per_channel_ = 1LL * Xo_ * Yo_ * vnat_iters;
  total_outputs_ =
      1LL * g_.iter_N * g_.iter_G * g_.iter_K * g_.iter_X * g_.iter_Y * vnat_iters * g_.num_vns;
  acc_ = hw.accumulation_buffer && hw.rn == ReduceNetwork::Art;
  lines_ = hw.rn_bw;
  values_valid_ = data_ != nullptr;
  if (data_) {
    output_.assign(static_cast<std::size_t>(op.output_elements()), 0.0f);
    from_fabric_.assign(output_.size(), 0);
  }

  cursor_.resize(ports_);
  port_psum_.resize(ports_);
  latch_full_.assign(ports_, false);
  latch_.resize(ports_);
  latch_psum_dest_.assign(ports_, 0);
  dest_scratch_.resize(std::max(1, t_.T_N * t_.T_G * t_.T_C));

  vnat_count_.assign(g_.num_vns, 0);
  vnat_psum_.assign(g_.num_vns, 0);

  // Counter layout.
  const int dn_switches = per_port_ - 1;
  std::size_t off = 0;
  auto take = [&](std::size_t n) {
    const std::size_t o = off;
    off += n;
    return o;
  };
  c_dn_top_ = take(ports_);
  c_dn_wire_ = take(static_cast<std::size_t>(ports_) * 2 * dn_switches);
  c_dn_uni_ = take(static_cast<std::size_t>(ports_) * dn_switches);
  c_dn_bc_ = take(static_cast<std::size_t>(ports_) * dn_switches);
  c_mn_wire_ = take(ms_ - 1);
  c_mult_ = take(ms_);
  c_fwd_psum_ = take(ms_);
  const int nodes = ms_ - 1 + (hw.rn == ReduceNetwork::Fen ? 1 : 0);
  c_rn_wire_ = take(2 * static_cast<std::size_t>(nodes));
  c_rn_fw_ = take(nodes);
  c_rn_up_ = take(nodes);
  c_add21_ = take(nodes);
  c_add31_ = take(nodes);
  c_acc_wire_ = take(acc_ ? ms_ - 1 : 0);
  c_acc_rd_ = take(acc_ ? ms_ - 1 : 0);
  c_acc_wr_ = take(acc_ ? ms_ - 1 : 0);
  c_acc_add_ = take(acc_ ? ms_ - 1 : 0);
  build_reduction();  // sets bus geometry
  c_cb_in_ = take(static_cast<std::size_t>(lines_) * bus_ports_);
  c_cb_out_ = take(lines_);
  build_templates();
  // Packets sent per template part and partial sums sent per multiplier: the distribution
  // network's counters follow from these at the end (each part always takes the same route).
  part_base_[0] = take(weight_template_.parts.size());
  part_base_[1] = take(input_template_[0].parts.size());
  part_base_[2] = take(input_template_[1].parts.size());
  c_psum_to_ = take(ms_);
  c_end_ = off;
  cnt_.assign(c_end_, 0);
  build_multipliers();
  port_relevant_.assign(ports_, 0);
  for (const Template* t : {&weight_template_, &input_template_[0], &input_template_[1]})
    for (int port = 0; port < ports_; ++port)
      if (!t->by_port[port].empty()) port_relevant_[port] = 1;
}

void MaeriMachine::build_reduction() {
  tree_ = compile_reduce_tree(hw_.rn, ms_, g_.vn_size, g_.num_vns);
  levels_ = tree_.levels;
  wiring_ = wire_collection_bus(hw_.rn, ms_, lines_);
  bus_ports_ = wiring_.ports_per_line;
  const int nodes = tree_.node_count();
  nd_.resize(nodes);
  node_fw_link_.assign(nodes, -1);
  nd_even_.assign(nodes, 0);
  for (int l = 0; l < levels_; ++l)
    for (int j = 0; j < (1 << l); ++j) nd_even_[ReduceTree::index(l, j)] = j % 2 == 0;
  if (hw_.rn == ReduceNetwork::Fen) nd_even_[tree_.fen_special()] = 0;
  nd_out_.assign(nodes, Out::Parent);
  nd_out_index_.assign(nodes, -1);
  up_link_.resize(nodes);
  fold_inputs_.resize(nodes);

  // Augmented links join (l, j-1) and (l, j) for even j >= 2.
  for (int l = 1; l < levels_; ++l)
    for (int j = 2; j < (1 << l); j += 2) {
      const int id = static_cast<int>(fw_link_.size());
      fw_link_.emplace_back();
      node_fw_link_[ReduceTree::index(l, j - 1)] = id;
      node_fw_link_[ReduceTree::index(l, j)] = id;
    }

  bus_in_.resize(static_cast<std::size_t>(lines_) * bus_ports_);
  bus_fifo_.resize(bus_in_.size());
  bus_rr_.assign(lines_, 0);
  bus_queued_.assign(lines_, 0);
  bus_out_.resize(lines_);

  if (acc_) {
    acc_in_.resize(ms_ - 1);
    acc_fifo_.resize(ms_ - 1);
    acc_reg_.assign(ms_ - 1, Psum{0, 0});
    acc_count_.assign(ms_ - 1, 0);
    acc_bus_.assign(ms_ - 1, 0);
  }
  std::vector<int> acc_of_node(nodes, -1);
  for (int k = 0; k < static_cast<int>(wiring_.order.size()); ++k)
    acc_of_node[wiring_.order[k]] = k;

  for (int id = 0; id < nodes; ++id) {
    const AdderConfig& c = tree_.nodes[id];
    const int bus_link = wiring_.line[id] * bus_ports_ + wiring_.port[id];
    if (c.to_memory) {
      nd_out_[id] = Out::Memory;
      if (acc_) {
        const int k = acc_of_node[id];
        nd_out_index_[id] = k;
      } else {
        nd_out_index_[id] = bus_link;
      }
    } else if (c.to_fold_node) {
      nd_out_[id] = Out::Fold;
      nd_out_index_[id] = id;
    } else if (id == 0) {
      nd_out_[id] = Out::Lookup;
    } else if (hw_.rn == ReduceNetwork::Fen && id == tree_.fen_special()) {
      nd_out_[id] = Out::Lookup;  // never used: the folding node always writes to memory
    } else {
      // parent of (l, j) is (l-1, j/2), side j%2
      int l = 0;
      while (ReduceTree::index(l + 1, 0) <= id) ++l;
      const int j = id - ReduceTree::index(l, 0);
      nd_out_[id] = Out::Parent;
      nd_out_index_[id] = ReduceTree::index(l - 1, j / 2) * 2 + (j % 2);
    }
  }
  if (acc_)
    for (int k = 0; k < ms_ - 1; ++k) {
      const int node = wiring_.order[k];
      acc_bus_[k] = wiring_.line[node] * bus_ports_ + wiring_.port[node];
    }
  bus_line_sources_.assign(lines_, {});
  for (int id = 0; id < nodes; ++id)
    if (tree_.nodes[id].to_memory) bus_line_sources_[wiring_.line[id]].push_back(wiring_.port[id]);
  for (auto& v : bus_line_sources_) std::sort(v.begin(), v.end());
  if (hw_.rn == ReduceNetwork::Fen) {
    const std::vector<int> target = fen_up_targets(ms_);
    for (int l = 0; l < levels_; ++l)
      for (int j = 0; j < (1 << l); ++j) {
        const int id = ReduceTree::index(l, j);
        if (target[id] >= 0) fold_inputs_[target[id]].push_back(id);
      }
  }

  // Order of the adder cycles: root (and the FEN folding node), then each level from the top;
  // a pair joined by an active augmented link runs receiver first.
  node_order_.push_back(0);
  if (hw_.rn == ReduceNetwork::Fen) node_order_.push_back(tree_.fen_special());
  for (int l = 1; l < levels_; ++l) {
    int j = 0;
    while (j < (1 << l)) {
      const int id = ReduceTree::index(l, j);
      const AdderConfig& c = tree_.nodes[id];
      if (c.link != LinkDir::None && j + 1 < (1 << l)) {
        const int next = ReduceTree::index(l, j + 1);
        if (c.link == LinkDir::Send) {
          node_order_.push_back(next);
          node_order_.push_back(id);
        } else {
          node_order_.push_back(id);
          node_order_.push_back(next);
        }
        j += 2;
      } else {
        node_order_.push_back(id);
        ++j;
      }
    }
  }
}

void MaeriMachine::build_multipliers() {
  ms_vn_.assign(ms_, -1);
  ms_nf_.assign(ms_, 0);
  ms_fwd_psum_.assign(ms_, 0);
  ms_fw_send_.assign(ms_, 0);
  ms_fw_recv_.assign(ms_, 0);
  ms_fold_.assign(ms_, 0);
  ms_win_.assign(ms_, 0);
  ms_act_.resize(ms_);
  ms_fwin_.resize(ms_);
  ms_w_.resize(ms_);
  ms_in_.resize(ms_);
  ms_fw_link_.resize(ms_);
  n_windows_ = Yo_;
  for (int v = 0; v < g_.num_vns; ++v)
    for (int j = 0; j < g_.vn_size; ++j) {
      const int ms = v * g_.vn_size + j;
      ms_vn_[ms] = v;
      ms_nf_[ms] = g_.n_folding;
      ms_fwd_psum_[ms] = g_.folding && j == 0;
    }
  const bool links = t_.T_Y == 1 && stride_ == 1 && S_ % t_.T_S == 0;
  if (links)
    for (int v = 0; v < g_.num_vns; ++v)
      for (int c = 0; c < t_.T_C; ++c)
        for (int r = 0; r < t_.T_R; ++r)
          for (int s = 0; s < t_.T_S; ++s) {
            const int ms = v * g_.vn_size + c * t_.T_R * t_.T_S + r * t_.T_S + s + shift_;
            ms_fw_send_[ms] = s > 0;
            ms_fw_recv_[ms] = s < t_.T_S - 1;
          }
}

// ------------------------------------------------------------------------------------------
// Memory controller

long long MaeriMachine::threshold(long long iteration_index) const {
  const long long k = iteration_index % g_.iter_K;
  const long long g = (iteration_index / g_.iter_K) % g_.iter_G;
  return g * t_.T_G * Kg_ + k * t_.T_K * t_.T_G;
}

float MaeriMachine::input_value(int n, int row, int col, int ch) const {
  if (!data_ || n >= N_ || row >= op_.X || col >= op_.Y || ch >= op_.C) return 0.0f;
  return data_->input[((static_cast<std::size_t>(n) * op_.X + row) * op_.Y + col) * op_.C + ch];
}

float MaeriMachine::weight_value(int gk, int r, int s, int c) const {
  if (!data_ || gk >= op_.K) return 0.0f;
  return data_->weights[((static_cast<std::size_t>(gk) * R_ + r) * S_ + s) * Cg_ + c];
}

// The destinations of every packet of a fold step depend only on the tile, so they are worked
// out once: per weight (g, k, c, r, s) and per input (x, y, n, g, c), the multipliers it goes to,
// split by read port. Generation then only fills in values, validity and the iteration tag.
void MaeriMachine::build_templates() {
  std::vector<int> dests;
  auto add = [&](Template& t, int a, int b, int c, int d, int e) {
    t.packets.push_back(
        TemplatePacket{a, b, c, d, e, static_cast<std::uint32_t>(t.parts.size()), 0});
    if (!std::is_sorted(dests.begin(), dests.end())) std::sort(dests.begin(), dests.end());
    dests.erase(std::unique(dests.begin(), dests.end()), dests.end());
    std::size_t i = 0;
    while (i < dests.size()) {
      const int port = dests[i] / per_port_;
      std::size_t j = i;
      while (j < dests.size() && dests[j] / per_port_ == port) ++j;
      t.parts.push_back(TemplatePart{port, static_cast<std::uint32_t>(j - i),
                                     static_cast<std::uint32_t>(t.dests.size())});
      t.dests.insert(t.dests.end(), dests.begin() + static_cast<std::ptrdiff_t>(i),
                     dests.begin() + static_cast<std::ptrdiff_t>(j));
      i = j;
    }
    t.packets.back().part_count =
        static_cast<std::uint32_t>(t.parts.size()) - t.packets.back().first_part;
  };
  const bool multicast = t_.T_N * t_.T_X * t_.T_Y > 1;
  for (int g = 0; g < t_.T_G; ++g)
    for (int k = 0; k < t_.T_K; ++k)
      for (int c = 0; c < t_.T_C; ++c)
        for (int r = 0; r < t_.T_R; ++r)
          for (int s = 0; s < t_.T_S; ++s) {
            const int base = c * t_.T_S * t_.T_R + r * t_.T_S + s + shift_;
            dests.clear();
            if (multicast) {
              for (int n = 0; n < t_.T_N; ++n)
                for (int x = 0; x < t_.T_X; ++x)
                  for (int y = 0; y < t_.T_Y; ++y)
                    dests.push_back(n * t_.T_G * t_.T_K * t_.T_X * t_.T_Y * window_ +
                                    g * t_.T_K * t_.T_X * t_.T_Y * window_ +
                                    k * t_.T_X * t_.T_Y * window_ + x * t_.T_Y * window_ +
                                    y * window_ + base);
            } else {
              dests.push_back(g * t_.T_K * window_ + k * window_ + base);
            }
            add(weight_template_, g, k, c, r, s);
          }
  const int T_R = t_.T_R, T_S = t_.T_S, T_X = t_.T_X, T_Y = t_.T_Y;
  const int y_inputs = T_S + (T_Y - 1) * stride_;
  const int x_inputs = T_R + (T_X - 1) * stride_;
  const int lanes = t_.T_N * t_.T_G * t_.T_C;
  for (int variant = 0; variant < 2; ++variant) {
    // Variant 1: a later window of a row with the multipliers' forwarding links on: only the
    // newest column is read; the others move between neighbouring multipliers.
    const int y_init = variant == 0 ? 0 : y_inputs - 1;
    Template& tmpl = input_template_[variant];
    for (int x = 0; x < x_inputs; ++x)
      for (int y = y_init; y < y_inputs; ++y) {
        for (int l = 0; l < lanes; ++l) dest_scratch_[l].clear();
        // Virtual neurons (output pixels of the tile) whose window contains input (x, y).
        const int first_i = x - (T_R - 1) < 0 ? 0 : (x - (T_R - 1)) / stride_;
        const int last_i = x / stride_;
        for (int i = first_i; i <= last_i; ++i) {
          const int fx = stride_ * i;
          if (!(fx + (T_R - 1) < x_inputs && x <= fx + T_R - 1 && x >= fx)) continue;
          const int first_j = y - (T_S - 1) < 0 ? 0 : (y - (T_S - 1)) / stride_;
          const int last_j = y / stride_;
          for (int j = first_j; j <= last_j; ++j) {
            const int fy = stride_ * j;
            if (!(fy + (T_S - 1) < y_inputs && y <= fy + T_S - 1 && y >= fy)) continue;
            const int vn = i * T_Y + j;
            const int receiver = vn * g_.vn_size + (x - fx) * T_S + (y - fy) + shift_;
            for (int n = 0; n < t_.T_N; ++n)
              for (int g = 0; g < t_.T_G; ++g)
                for (int k = 0; k < t_.T_K; ++k)
                  for (int c = 0; c < t_.T_C; ++c)
                    dest_scratch_[(n * t_.T_G + g) * t_.T_C + c].push_back(
                        n * t_.T_K * T_X * T_Y * window_ + g * t_.T_K * T_X * T_Y * window_ +
                        k * T_X * T_Y * window_ + c * T_R * T_S + receiver);
          }
        }
        for (int n = 0; n < t_.T_N; ++n)
          for (int g = 0; g < t_.T_G; ++g)
            for (int c = 0; c < t_.T_C; ++c) {
              dests = dest_scratch_[(n * t_.T_G + g) * t_.T_C + c];
              add(tmpl, x, y, n, g, c);
            }
      }
  }
  for (Template* t : {&weight_template_, &input_template_[0], &input_template_[1]}) {
    t->by_port.assign(ports_, {});
    for (std::uint32_t k = 0; k < t->packets.size(); ++k)
      for (std::uint32_t q = 0; q < t->packets[k].part_count; ++q)
        t->by_port[t->parts[t->packets[k].first_part + q].port].emplace_back(k, q);
  }
}

void MaeriMachine::record_step(std::uint8_t tmpl, long long iter) {
  steps_.push_back(Step{tmpl, iter, cN_ * t_.T_N, cG_ * t_.T_G, cK_ * t_.T_K, cX_ * t_.T_X,
                        cY_ * t_.T_Y, cC_ * t_.T_C, cR_ * t_.T_R, cS_ * t_.T_S});
}

float MaeriMachine::step_value(const Step& st, const TemplatePacket& tp) const {
  if (!data_ || !values_valid_) return 0.0f;
  if (st.tmpl == 0) {
    const int g = tp.a, k = tp.b, c = tp.c, r = tp.d, s = tp.e;
    if (st.idxR + r < R_ && st.idxS + s < S_ && st.idxC + c < Cg_ && st.idxK + k < Kg_ &&
        st.idxG + g < G_)
      return weight_value((st.idxG + g) * Kg_ + st.idxK + k, st.idxR + r, st.idxS + s, st.idxC + c);
    return 0.0f;
  }
  const int x = tp.a, y = tp.b, n = tp.c, g = tp.d, c = tp.e;
  if (st.idxR + x < t_.T_X + R_ - 1 && st.idxS + y < t_.T_Y + S_ - 1 && st.idxC + c < Cg_)
    return input_value(st.idxN + n, st.idxX * stride_ + x + st.idxR,
                       st.idxY * stride_ + y + st.idxS, (st.idxG + g) * Cg_ + st.idxC + c);
  return 0.0f;
}

void MaeriMachine::generate_weights() {
  const int idxK = cK_ * t_.T_K, idxC = cC_ * t_.T_C, idxR = cR_ * t_.T_R, idxS = cS_ * t_.T_S;
  const long long iter = 1LL * cG_ * t_.T_G * Kg_ + 1LL * idxK * t_.T_G;
  for (const TemplatePacket& tp : weight_template_.packets)
    if (idxR + tp.d < R_ && idxS + tp.e < S_ && idxC + tp.c < Cg_ && idxK + tp.b < Kg_)
      ++gb_.weight_reads;
  record_step(0, iter);
  if (++cS_ == g_.iter_S) {
    cS_ = 0;
    if (++cR_ == g_.iter_R) {
      cR_ = 0;
      if (++cC_ == g_.iter_C) {
        cC_ = 0;
        weights_done_ = true;
      }
    }
  }
}

void MaeriMachine::generate_inputs() {
  const bool links = t_.T_Y == 1 && t_.T_S > 1 && stride_ == 1 && S_ % t_.T_S == 0;
  const int variant = links && cY_ > 0 ? 1 : 0;
  const int out_y_inputs = t_.T_Y + S_ - 1;
  const int out_x_inputs = t_.T_X + R_ - 1;
  const int idxC = cC_ * t_.T_C, idxR = cR_ * t_.T_R, idxS = cS_ * t_.T_S;
  const long long iter = 1LL * cG_ * t_.T_G * Kg_ + 1LL * cK_ * t_.T_K * t_.T_G;
  for (const TemplatePacket& tp : input_template_[variant].packets)
    if (idxR + tp.a < out_x_inputs && idxS + tp.b < out_y_inputs && idxC + tp.e < Cg_)
      ++gb_.input_reads;
  record_step(static_cast<std::uint8_t>(1 + variant), iter);
  advance_inputs();
}

void MaeriMachine::advance_inputs() {
  if (++cS_ < g_.iter_S) return;
  cS_ = 0;
  if (++cR_ < g_.iter_R) return;
  cR_ = 0;
  if (++cC_ < g_.iter_C) return;
  cC_ = 0;
  if (++cY_ < g_.iter_Y) return;
  cY_ = 0;
  if (++cX_ < g_.iter_X) return;
  cX_ = 0;
  weights_done_ = false;
  if (++cK_ < g_.iter_K) return;
  cK_ = 0;
  if (++cG_ < g_.iter_G) return;
  cG_ = 0;
  if (++cN_ < g_.iter_N) return;
  cN_ = 0;
  weights_done_ = true;
  input_finished_ = true;
}

void MaeriMachine::memory_cycle() {
  const long long current = opix_ / per_channel_;
  const long long iter = 1LL * cG_ * t_.T_G * Kg_ + 1LL * cK_ * t_.T_K * t_.T_G;
  if (!input_finished_) {
    if (iter <= current) {
      if (!weights_done_)
        generate_weights();
      else
        generate_inputs();
    } else {
      ++gate_stalls_;
    }
  }
  // Results from the lookup table and from every bus line, in that order.
  if (mem_in_.pending) mem_in_.take([&](const Psum& p) { write_fifo_.push(p); });
  for (int l = 0; l < lines_; ++l)
    if (bus_out_[l].pending) bus_out_[l].take([&](const Psum& p) { write_fifo_.push(p); });
  process_writes();
  send_ports();
}

void MaeriMachine::process_writes() {
  // STONNE pops while its index is below the FIFO's (shrinking) size: half of the FIFO.
  const std::size_t n = (write_fifo_.size() + 1) / 2;
  for (std::size_t i = 0; i < n; ++i) {
    const Psum p = write_fifo_.pop();
    const int vn = p.vn;
    // Where this VN's next output goes (STONNE's VN address table).
    long long q = vnat_count_[vn]++;
    q /= vnat_psums_;
    const int y_it = static_cast<int>(q % g_.iter_Y);
    q /= g_.iter_Y;
    const int x_it = static_cast<int>(q % g_.iter_X);
    q /= g_.iter_X;
    const int k_it = static_cast<int>(q % g_.iter_K);
    q /= g_.iter_K;
    const int g_it = static_cast<int>(q % g_.iter_G);
    const int n_it = static_cast<int>(q / g_.iter_G);
    int rest = vn;
    const int vy = rest % t_.T_Y;
    rest /= t_.T_Y;
    const int vx = rest % t_.T_X;
    rest /= t_.T_X;
    const int vk = rest % t_.T_K;
    rest /= t_.T_K;
    const int vg = rest % t_.T_G;
    const int vnn = rest / t_.T_G;
    const int on = vnn + n_it * t_.T_N, og = vg + g_it * t_.T_G, ok = vk + k_it * t_.T_K,
              ox = vx + x_it * t_.T_X, oy = vy + y_it * t_.T_Y;
    const bool last_fold = vnat_psum_[vn] + 1 == vnat_psums_;
    if (ok < Kg_ && on < N_ && og < G_ && ox < Xo_ && oy < Yo_) {
      ++gb_.psum_writes;
      if (values_valid_) {
        const std::size_t at =
            ((static_cast<std::size_t>(on) * Xo_ + ox) * Yo_ + oy) * op_.K + og * Kg_ + ok;
        output_[at] = p.value;
        from_fabric_[at] = last_fold;
      }
    }
    ++opix_;
    if (++vnat_psum_[vn] < vnat_psums_) {
      ++gb_.psum_reads;
      const int dest = vn * g_.vn_size;
      port_psum_[dest / per_port_].push(PsumPacket{p.value, dest});
    } else {
      vnat_psum_[vn] = 0;
    }
    if (opix_ == total_outputs_) finished_ = true;
  }
}

void MaeriMachine::send_ports() {
  const long long current = opix_ / per_channel_;
  long long oldest = steps_base_ + static_cast<long long>(steps_.size());
  long long oldest_rel = oldest, newest_rel = steps_base_;
  for (int port = 0; port < ports_; ++port) {
    Outgoing out{kPsum, 0.0f, 0, nullptr};
    bool have = false;
    if (!port_psum_[port].empty()) {  // partial sums go first
      const PsumPacket pp = port_psum_[port].pop();
      latch_psum_dest_[port] = pp.dest;
      out = Outgoing{kPsum, pp.value, 1, &latch_psum_dest_[port]};
      ++cnt_[c_psum_to_ + pp.dest];
      have = true;
    } else {
      Cursor& cur = cursor_[port];
      const long long end = steps_base_ + static_cast<long long>(steps_.size());
      while (cur.step < end) {
        const Step& st = steps_[static_cast<std::size_t>(cur.step - steps_base_)];
        const Template& t = step_template(st);
        const auto& mine = t.by_port[port];
        if (cur.pos >= mine.size()) {
          ++cur.step;
          cur.pos = 0;
          continue;
        }
        if (st.iter <= current) {  // packets of a later iteration wait for the earlier outputs
          const TemplatePacket& tp = t.packets[mine[cur.pos].first];
          const TemplatePart& part = t.parts[tp.first_part + mine[cur.pos].second];
          out = Outgoing{st.tmpl == 0 ? kWeight : kInput, step_value(st, tp), part.count,
                         t.dests.data() + part.begin};
          ++cnt_[part_base_[st.tmpl] + tp.first_part + mine[cur.pos].second];
          have = true;
          if (++cur.pos >= mine.size()) {
            ++cur.step;
            cur.pos = 0;
          }
        }
        break;
      }
    }
    oldest = std::min(oldest, cursor_[port].step);
    if (port_relevant_[port]) {
      oldest_rel = std::min(oldest_rel, cursor_[port].step);
      newest_rel = std::max(newest_rel, cursor_[port].step);
    }
    if (!have) continue;
    ++cnt_[c_dn_top_ + port];
    if (dn_tree_) {
      latch_full_[port] = true;
      latch_[port] = out;
    } else {
      deliver(out);
    }
  }
  oldest_relevant_ = oldest_rel;
  newest_relevant_ = newest_rel;
  // Forget the steps every port has passed (and no backlog mark needs).
  if (keep_from_ >= 0) oldest = std::min(oldest, keep_from_);
  const long long passed = oldest - steps_base_;
  if (passed > 4096 && passed > static_cast<long long>(steps_.size()) / 2) {
    steps_.erase(steps_.begin(), steps_.begin() + static_cast<std::ptrdiff_t>(passed));
    steps_base_ = oldest;
  }
}

void MaeriMachine::deliver(const Outgoing& p) {
  for (std::uint32_t i = 0; i < p.count; ++i) {
    MsInput& in = ms_in_[p.dests[i]];
    in.pending = true;
    in.kind = p.kind;
    in.value = p.value;
  }
}

void MaeriMachine::count_dn_route(int port, const int* dests, std::uint32_t count,
                                  std::uint64_t times, std::vector<std::uint64_t>& dn) const {
  // Walk the port's binary tree: a switch sends left and/or right where a destination lies.
  const int base = port * per_port_;
  const int switches = per_port_ - 1;
  struct Frame {
    int level, j;
    std::uint32_t lo, hi;  // destination index range
  };
  Frame stack[64];
  int top = 0;
  stack[top++] = {0, 0, 0, count};
  while (top) {
    const Frame f = stack[--top];
    const int span = per_port_ >> f.level;
    const int first = base + f.j * span;
    const int mid = first + span / 2;
    std::uint32_t split = f.lo;
    while (split < f.hi && dests[split] < mid) ++split;
    const bool left = split > f.lo, right = f.hi > split;
    const int sw = (1 << f.level) - 1 + f.j;
    if (left && right)
      dn[c_dn_bc_ + static_cast<std::size_t>(port) * switches + sw] += times;
    else
      dn[c_dn_uni_ + static_cast<std::size_t>(port) * switches + sw] += times;
    const std::size_t wire = c_dn_wire_ + static_cast<std::size_t>(port) * 2 * switches +
                             static_cast<std::size_t>(2 * sw);
    if (left) {
      dn[wire] += times;
      if (f.level + 1 < dn_levels_) stack[top++] = {f.level + 1, 2 * f.j, f.lo, split};
    }
    if (right) {
      dn[wire + 1] += times;
      if (f.level + 1 < dn_levels_) stack[top++] = {f.level + 1, 2 * f.j + 1, split, f.hi};
    }
  }
}

// ------------------------------------------------------------------------------------------
// Collection bus, reduction network, multipliers, distribution

void MaeriMachine::bus_cycle() {
  for (int l = 0; l < lines_; ++l) {
    const std::size_t base = static_cast<std::size_t>(l) * bus_ports_;
    for (int p = 0; p < bus_ports_; ++p) {
      Link& in = bus_in_[base + p];
      if (in.pending) {
        bus_queued_[l] += static_cast<long long>(in.size());
        in.take([&](const Psum& v) { bus_fifo_[base + p].push(v); });
      }
    }
    // An empty line scans all its inputs and ends where it started.
    if (bus_queued_[l] == 0) continue;
    --bus_queued_[l];
    int& rr = bus_rr_[l];
    for (int tries = 0; tries < bus_ports_; ++tries) {
      Ring<Psum>& f = bus_fifo_[base + rr];
      const bool take = !f.empty();
      Psum v{0, 0};
      if (take) v = f.pop();
      rr = (rr + 1) % bus_ports_;
      if (take) {
        bus_out_[l].send_one(v);
        ++cnt_[c_cb_out_ + l];
        break;
      }
    }
  }
}

void MaeriMachine::accumulator_cycle(int k) {
  Link& in = acc_in_[k];
  if (in.pending) in.take([&](const Psum& v) { acc_fifo_[k].push(v); });
  if (acc_fifo_[k].empty()) return;
  const Psum v = acc_fifo_[k].pop();
  if (acc_count_[k] == 0) {
    acc_reg_[k] = v;
    ++cnt_[c_acc_wr_ + k];
  } else {
    if (acc_reg_[k].vn != v.vn) [[unlikely]]
      mixed_neurons();
    acc_reg_[k].value += v.value;
    ++cnt_[c_acc_add_ + k];
    ++cnt_[c_acc_rd_ + k];
    ++cnt_[c_acc_wr_ + k];
  }
  if (acc_count_[k] == g_.n_folding - 1) {
    acc_count_[k] = 0;
    bus_in_[acc_bus_[k]].send_one(acc_reg_[k]);
    ++cnt_[c_cb_in_ + acc_bus_[k]];
  } else {
    ++acc_count_[k];
  }
}

void MaeriMachine::node_cycle(int id) {
  const AdderConfig& c = tree_.nodes[id];
  Node& nd = nd_[id];
  Link& lin = nd.in[0];
  Link& rin = nd.in[1];
  const int fw_id = node_fw_link_[id];
  if (!lin.pending && !rin.pending && nd.left.empty() && nd.right.empty() && nd.fold.empty() &&
      fold_inputs_[id].empty() &&
      !(c.link == LinkDir::Receive && fw_id >= 0 && fw_link_[fw_id].pending))
    return;  // idle: nothing to receive, nothing queued
  if (lin.pending) lin.take([&](const Psum& v) { nd.left.push(v); });
  if (rin.pending) rin.take([&](const Psum& v) { nd.right.push(v); });
  const int fw = fw_id;
  if (c.link == LinkDir::Receive && fw >= 0 && fw_link_[fw].pending)
    fw_link_[fw].take([&](const Psum& v) { nd.fw.push(v); });
  for (int src : fold_inputs_[id]) {
    Link& up = up_link_[src];
    if (up.pending) up.take([&](const Psum& v) { nd.fold.push(v); });
  }
  out_fw_.n = 0;
  out_ps_.n = 0;
  Ring<Psum>& L = nd.left;
  Ring<Psum>& Rt = nd.right;
  const bool fw_enabled = c.link != LinkDir::None;
  switch (c.mode) {
    case AdderMode::Add21:
      if (!L.empty() && Rt.empty() && !c.right_enabled)
        (fw_enabled ? out_fw_ : out_ps_).push(L.pop());
      if (!Rt.empty() && L.empty() && !c.left_enabled)
        (fw_enabled ? out_fw_ : out_ps_).push(Rt.pop());
      if (!L.empty() && !Rt.empty()) {
        Psum a = L.pop();
        const Psum b = Rt.pop();
        if (a.vn != b.vn) [[unlikely]]
          mixed_neurons();
        a.value += b.value;
        ++cnt_[c_add21_ + id];
        (fw_enabled ? out_fw_ : out_ps_).push(a);
      }
      break;
    case AdderMode::Add31:
      if (!L.empty() && !Rt.empty() && !nd.fw.empty()) {
        Psum a = L.pop();
        const Psum b = Rt.pop(), f = nd.fw.pop();
        if (a.vn != b.vn || a.vn != f.vn) [[unlikely]]
          mixed_neurons();
        a.value += b.value;
        a.value += f.value;
        ++cnt_[c_add31_ + id];
        out_ps_.push(a);
      }
      break;
    case AdderMode::Add11Fw11: {
      if (nd_even_[id]) {
        if (!L.empty()) out_fw_.push(L.pop());
        if (!Rt.empty()) out_ps_.push(Rt.pop());
      } else {
        if (!L.empty()) out_ps_.push(L.pop());
        if (!Rt.empty()) out_fw_.push(Rt.pop());
      }
      break;
    }
    case AdderMode::Fw22:
      while (!L.empty()) out_ps_.push(L.pop());
      while (!Rt.empty()) out_ps_.push(Rt.pop());
      break;
    case AdderMode::Fold:
      if (!nd.fold.empty()) {
        const Psum v = nd.fold.pop();
        if (nd.fold_count == 0) {
          nd.fold_reg = v;
        } else {
          if (nd.fold_reg.vn != v.vn) [[unlikely]]
            mixed_neurons();
          nd.fold_reg.value += v.value;
          ++cnt_[c_add21_ + id];
        }
        if (nd.fold_count == g_.n_folding - 1) {
          out_ps_.push(nd.fold_reg);
          nd.fold_count = 0;
        } else {
          ++nd.fold_count;
        }
      }
      break;
  }
  if (!out_fw_.empty() && fw >= 0) {
    fw_link_[fw].send(out_fw_.v.data(), out_fw_.n);
    ++cnt_[c_rn_fw_ + id];
  }
  if (!out_ps_.empty()) {
    switch (nd_out_[id]) {
      case Out::Memory:
        if (acc_) {
          acc_in_[nd_out_index_[id]].send(out_ps_.v.data(), out_ps_.n);
          ++cnt_[c_acc_wire_ + nd_out_index_[id]];
        } else {
          bus_in_[nd_out_index_[id]].send(out_ps_.v.data(), out_ps_.n);
          ++cnt_[c_cb_in_ + nd_out_index_[id]];
        }
        break;
      case Out::Fold:
        up_link_[id].send(out_ps_.v.data(), out_ps_.n);
        ++cnt_[c_rn_up_ + id];
        break;
      case Out::Lookup:
        lookup_in_.send(out_ps_.v.data(), out_ps_.n);
        break;
      case Out::Parent:
        child_link(nd_out_index_[id]).send(out_ps_.v.data(), out_ps_.n);
        ++cnt_[c_rn_wire_ + nd_out_index_[id]];
        break;
    }
  }
}

void MaeriMachine::reduction_cycle() {
  if (acc_)
    for (int k = 0; k < ms_ - 1; ++k) accumulator_cycle(k);
  for (int id : node_order_) node_cycle(id);
}

void MaeriMachine::multiplier_cycle(int i) {
  if (ms_vn_[i] < 0 && !ms_in_[i].pending) return;  // not mapped: never fed
  auto receive = [&]() __attribute__((always_inline)) {
    MsInput& in = ms_in_[i];
    if (!in.pending) return;
    in.pending = false;
    if (in.kind == kInput) {
      ms_act_[i].push(Act{in.value, false});
    } else if (in.kind == kWeight) {
      if (static_cast<int>(ms_w_[i].size()) == ms_nf_[i]) ms_w_[i].clear();
      ms_w_[i].push(in.value);
    } else {
      ms_act_[i].push(Act{in.value, true});
      ++cnt_[c_fwd_psum_ + i];
    }
  };
  const int leaf = ReduceTree::index(levels_ - 1, i / 2) * 2 + (i % 2);
  if (ms_fwd_psum_[i]) {
    const int nf = ms_nf_[i];
    if (ms_fold_[i] > 0) {
      receive();
      if (!ms_act_[i].empty()) {
        const Act a = ms_act_[i].pop();
        child_link(leaf).send_one(Psum{a.value, ms_vn_[i]});
        ++cnt_[c_rn_wire_ + leaf];
        if (++ms_fold_[i] == nf) ms_fold_[i] = 0;
      }
    } else {
      // First fold of a window: the accumulating multiplier contributes a zero.
      child_link(leaf).send_one(Psum{0.0f, ms_vn_[i]});
      ++cnt_[c_rn_wire_ + leaf];
      if (++ms_fold_[i] == nf) ms_fold_[i] = 0;
    }
    return;
  }
  receive();
  if (ms_fw_recv_[i]) {
    ValueLink& fl = ms_fw_link_[i];
    if (fl.pending) {
      ms_fwin_[i].push(fl.value);
      fl.pending = false;
    }
  }
  const bool from_neighbour = ms_fw_recv_[i] && ms_win_[i] > 0;
  const int nf = ms_nf_[i];
  if (static_cast<int>(ms_w_[i].size()) < nf) return;
  float activation;
  if (from_neighbour) {
    if (ms_fwin_[i].empty()) return;
    activation = ms_fwin_[i].pop();
  } else {
    if (ms_act_[i].empty()) return;
    activation = ms_act_[i].pop().value;
  }
  const float weight = ms_w_[i].front();
  ms_w_[i].rotate();
  child_link(leaf).send_one(Psum{activation * weight, ms_vn_[i]});
  ++cnt_[c_rn_wire_ + leaf];
  ++cnt_[c_mult_ + i];
  if (ms_win_[i] < n_windows_ - 1 && ms_fw_send_[i] && i > 0) {
    ms_fw_link_[i - 1].pending = true;
    ms_fw_link_[i - 1].value = activation;
    ++cnt_[c_mn_wire_ + i - 1];
  }
  if (++ms_fold_[i] == nf) {
    ms_fold_[i] = 0;
    if (++ms_win_[i] == n_windows_) ms_win_[i] = 0;
  }
}

void MaeriMachine::distribution_cycle() {
  if (!dn_tree_) return;
  for (int port = 0; port < ports_; ++port) {
    if (!latch_full_[port]) continue;
    latch_full_[port] = false;
    deliver(latch_[port]);
  }
}

void MaeriMachine::step() {
  ++cycle_;
  memory_cycle();
  bus_cycle();
  reduction_cycle();
  if (lookup_in_.pending) {  // the lookup table passes the root's results to the controller
    std::swap(mem_in_, lookup_in_);
    lookup_in_.pending = false;
  }
  for (int i = 0; i < ms_; ++i) multiplier_cycle(i);
  distribution_cycle();
}

// ------------------------------------------------------------------------------------------
// Steady-state detection

long long MaeriMachine::point_index() const {
  const long long iteration = (1LL * cN_ * g_.iter_G + cG_) * g_.iter_K + cK_;
  return iteration * g_.iter_X + cX_;
}

// The controller is about to start a weight distribution (x = 0) or a new row of output
// pixels (x > 0) with its inner loops at zero.
bool MaeriMachine::at_point() const {
  if (input_finished_ || cY_ != 0 || cR_ != 0 || cS_ != 0 || cC_ != 0) return false;
  if (cX_ == 0) {
    if (weights_done_) return false;
    const long long iter = 1LL * cG_ * t_.T_G * Kg_ + 1LL * cK_ * t_.T_K * t_.T_G;
    return iter <= opix_ / per_channel_;
  }
  return weights_done_;
}

void MaeriMachine::canonical_state(std::vector<std::uint64_t>& s, bool full) const {
  s.clear();
  s.reserve(8192);
  auto put = [&](std::uint64_t v) { s.push_back(v); };
  put(cX_ == 0 ? 1 : 2);
  // Port queues: the recorded steps by their template (all steps of a template carry the same
  // destinations), with each port's position among them; the partial sums in fabric_state().
  long long oldest = steps_base_ + static_cast<long long>(steps_.size());
  for (const Cursor& c : cursor_) oldest = std::min(oldest, c.step);
  const long long pending = steps_base_ + static_cast<long long>(steps_.size()) - oldest;
  put(static_cast<std::uint64_t>(pending));
  for (const Cursor& c : cursor_) put(static_cast<std::uint64_t>(c.step - oldest) << 32 | c.pos);
  if (pending > 0) {
    const std::size_t first = static_cast<std::size_t>(oldest - steps_base_);
    if (full) {
      for (std::size_t i = first; i < steps_.size(); ++i) put(steps_[i].tmpl);
    } else {
      put(steps_[first].tmpl);
      put(steps_.back().tmpl);
    }
  }
  fabric_state(s);
}

void MaeriMachine::fabric_state(std::vector<std::uint64_t>& s) const {
  auto put = [&](std::uint64_t v) { s.push_back(v); };
  for (int port = 0; port < ports_; ++port) {
    const Ring<PsumPacket>& q = port_psum_[port];
    put(q.size());
    for (std::size_t i = 0; i < q.size(); ++i) put(static_cast<std::uint64_t>(q.at(i).dest));
  }
  for (int i = 0; i < ms_; ++i) {
    put(ms_in_[i].pending ? 1 + ms_in_[i].kind : 0);
    put(ms_fw_link_[i].pending);
    put(ms_act_[i].size());
    for (std::size_t k = 0; k < ms_act_[i].size(); ++k) put(ms_act_[i].at(k).psum);
    put(ms_fwin_[i].size());
    // A full weight FIFO is flushed by the next weight, exactly like an empty one fills, so a
    // multiplier with nothing else pending holds "no weights" either way.
    const bool idle =
        !ms_in_[i].pending && !ms_fw_link_[i].pending && ms_act_[i].empty() && ms_fwin_[i].empty();
    const std::size_t weights = ms_w_[i].size();
    put(idle && static_cast<int>(weights) == ms_nf_[i] ? 0 : weights);
    put(static_cast<std::uint64_t>(ms_fold_[i]) << 32 | static_cast<std::uint32_t>(ms_win_[i]));
  }
  auto put_link = [&](const Link& l) {
    put(l.pending ? l.size() + 1 : 0);
    if (l.pending)
      for (std::size_t i = 0; i < l.size(); ++i) put(static_cast<std::uint64_t>(l.item(i).vn));
  };
  auto put_ring = [&](const Ring<Psum>& r) {
    put(r.size());
    for (std::size_t k = 0; k < r.size(); ++k) put(static_cast<std::uint64_t>(r.at(k).vn));
  };
  for (const Node& n : nd_) {
    put_link(n.in[0]);
    put_link(n.in[1]);
  }
  for (const Link& l : fw_link_) put_link(l);
  for (const Link& l : up_link_) put_link(l);
  for (const Node& n : nd_) {
    put_ring(n.left);
    put_ring(n.right);
    put_ring(n.fw);
    put_ring(n.fold);
    put(static_cast<std::uint64_t>(n.fold_count));
  }
  for (std::size_t k = 0; k < acc_in_.size(); ++k) {
    put_link(acc_in_[k]);
    put_ring(acc_fifo_[k]);
    put(static_cast<std::uint64_t>(acc_count_[k]));
  }
  for (std::size_t k = 0; k < bus_in_.size(); ++k) {
    put_link(bus_in_[k]);
    put_ring(bus_fifo_[k]);
  }
  for (int l = 0; l < lines_; ++l) {
    // The arbiter scans from its position to the first non-empty input; only inputs that some
    // result can use are ever non-empty, so positions with the same next such input behave
    // alike.
    const std::vector<int>& src = bus_line_sources_[l];
    int next = src.empty() ? 0 : src.front();
    for (int p : src)
      if (p >= bus_rr_[l]) {
        next = p;
        break;
      }
    put(static_cast<std::uint64_t>(next));
    put_link(bus_out_[l]);
  }
  put_link(lookup_in_);
  put_link(mem_in_);
  put_ring(write_fifo_);
  for (int v : vnat_psum_) put(static_cast<std::uint64_t>(v));
}

void MaeriMachine::jump(long long to_point, long long periods, std::uint64_t d_cycles,
                        const std::vector<std::uint64_t>& d_counters, long long d_opix,
                        const std::vector<long long>& d_vnat) {
  cycle_ += periods * d_cycles;
  for (std::size_t i = 0; i < cnt_.size(); ++i) cnt_[i] += periods * d_counters[i];
  opix_ += periods * d_opix;
  for (std::size_t v = 0; v < vnat_count_.size(); ++v) vnat_count_[v] += periods * d_vnat[v];
  const long long iteration = to_point / g_.iter_X;
  cX_ = static_cast<int>(to_point % g_.iter_X);
  cK_ = static_cast<int>(iteration % g_.iter_K);
  cG_ = static_cast<int>((iteration / g_.iter_K) % g_.iter_G);
  cN_ = static_cast<int>(iteration / (1LL * g_.iter_K * g_.iter_G));
  cY_ = cR_ = cS_ = cC_ = 0;
  weights_done_ = cX_ > 0;
  values_valid_ = false;
}

MaeriMachine::ControllerState MaeriMachine::controller_state() const {
  return ControllerState{cN_, cG_,          cK_,          cX_,           cY_,
                         cR_, cS_,          cC_,          weights_done_, input_finished_,
                         gb_, gate_stalls_, steps_.size()};
}

void MaeriMachine::restore_controller(const ControllerState& c) {
  cN_ = c.n, cG_ = c.g, cK_ = c.k, cX_ = c.x, cY_ = c.y, cR_ = c.r, cS_ = c.s, cC_ = c.c;
  weights_done_ = c.weights_done;
  input_finished_ = c.input_finished;
  gb_ = c.gb;
  gate_stalls_ = c.stalls;
  steps_.resize(c.steps);
}

bool MaeriMachine::replay_controller(long long cycles, long long opix_lo, long long opix_hi) {
  // memory_cycle()'s emission: the gate is open when opix_ >= iter * per_channel_.
  for (long long t = 0; t < cycles; ++t) {
    if (input_finished_) return true;
    const long long iter = 1LL * cG_ * t_.T_G * Kg_ + 1LL * cK_ * t_.T_K * t_.T_G;
    if (iter <= opix_lo / per_channel_) {
      if (!weights_done_)
        generate_weights();
      else
        generate_inputs();
    } else if (iter * per_channel_ > opix_hi) {
      gate_stalls_ += static_cast<std::uint64_t>(cycles - t);  // closed all along
      return true;
    } else {
      return false;
    }
  }
  return true;
}

EngineRun MaeriMachine::run() {
  // Fast mode. At every loop point (a weight distribution or a new row of output pixels) the
  // fabric state (without data values) is compared with earlier points. Weight points keep
  // their full state, so a repeat is recognised at once; row points keep a fingerprint (their
  // port queues can be long) and a repeat is confirmed with the full state one period later.
  // Once the fabric provably repeats, as many whole periods as the loop structure and the
  // iteration gate allow are skipped, advancing cycles and counters by per-period deltas.
  struct Mark {
    long long index = 0;
    std::uint64_t cycle = 0;
    std::vector<std::uint64_t> counters;
    long long opix = 0;
    std::vector<long long> vnat;
    std::uint64_t stalls = 0;
    std::vector<std::uint64_t> state;  // full state (weight points and candidates)
  };
  std::unordered_map<std::uint64_t, Mark> weight_points;
  std::unordered_map<std::uint64_t, long long> row_points;  // fingerprint -> index
  std::optional<std::pair<Mark, long long>> candidate;      // (mark, period)
  std::vector<std::uint64_t> state;
  const long long points = 1LL * g_.iter_N * g_.iter_G * g_.iter_K * g_.iter_X;
  const long long last_point = points - 1;
  std::uint64_t stepped = 0;
  int skips = 0;
  // Row points pay off only when there are too few iterations for whole iterations to repeat.
  bool rows_useful = 1LL * g_.iter_N * g_.iter_G * g_.iter_K < 3;
  auto mark_here = [&](bool with_state) {
    Mark m{point_index(), cycle_, cnt_, opix_, vnat_count_, gate_stalls_, {}};
    if (with_state) m.state = state;
    return m;
  };
  // Output count that opens the gate of the weight point starting iteration `it`; after the
  // last iteration, the count that completes the operation.
  auto gate_outputs = [&](long long it) {
    return it * g_.iter_X >= points ? total_outputs_ : threshold(it) * per_channel_;
  };
  // Whole periods p that can follow point `here`, the period having started at point `a`.
  // Returns the periods and whether the last one ends the operation (the point after the last).
  auto skippable = [&](const Mark& a, long long here, long long p) {
    const bool blocked = gate_stalls_ != a.stalls;
    const long long d_opix = opix_ - a.opix;
    long long periods = 0;
    bool to_end = false;
    for (long long next = here + p; next <= points; next += p) {
      bool ok = true;
      for (long long t = next - p + 1; t <= next && ok; ++t) {
        const long long back = a.index + (t - a.index) % p;  // its counterpart in [a, here)
        const bool weights_point = t % g_.iter_X == 0;
        if (weights_point != (back % g_.iter_X == 0)) ok = false;
        if (ok && weights_point) {
          const long long q = (t - back) / p;
          const long long lhs = gate_outputs(t / g_.iter_X) - gate_outputs(back / g_.iter_X);
          // The end can only be predicted when the period waits for its gate exactly.
          if (t == points ? (!blocked || lhs != q * d_opix)
                          : (blocked ? lhs != q * d_opix : lhs > q * d_opix))
            ok = false;
        }
      }
      if (!ok) break;
      ++periods;
      to_end = next == points;
    }
    return std::make_pair(periods, to_end);
  };
  // Backlog points. When the controller runs ahead of the fabric (it emits a fold step per
  // cycle; the ports may take longer), its position never repeats relative to the fabric and
  // the points above never match. Here points are taken where the ports' oldest cursor passes
  // the first step of a row of output pixels; the state is the fabric's, with the cursors
  // relative to that step. Two equal such states a period apart repeat for as long as (1) the
  // steps the ports read in a period already exist when it starts (then how far ahead the
  // controller is does not matter), (2) those steps repeat, template for template, a period's
  // steps later, (3) none of them waits for the iteration gate, and (4) the operation does not
  // end. The controller itself is replayed alone over the skipped cycles (its emission depends
  // on the fabric only through the gate, which must stay open or shut all along).
  struct BacklogMark {
    long long anchor = 0;  // absolute index of the row's first step
    std::uint64_t cycle = 0;
    std::vector<std::uint64_t> counters;
    long long opix = 0;
    std::vector<long long> vnat;
    long long oldest = 0, end = 0;  // relevant cursors' oldest; steps emitted so far
    std::vector<std::uint64_t> state;
  };
  std::unordered_map<std::uint64_t, BacklogMark> backlog_points;
  long long anchor_scan = 0;
  std::uint64_t last_backlog_point = 0;
  const bool backlog = fast_;
  auto forget_backlog = [&]() {
    backlog_points.clear();
    keep_from_ = -1;
  };
  auto step_at = [&](long long i) -> const Step& {
    return steps_[static_cast<std::size_t>(i - steps_base_)];
  };
  // Steps [from, to] read within the gate and equal to the steps `period` earlier (those from
  // `first` on).
  auto repeats = [&](long long from, long long to, long long period, long long first,
                     long long gate) {
    for (long long i = from; i <= to; ++i) {
      const Step& st = step_at(i);
      if (st.iter > gate) return false;
      if (i - period >= first && step_at(i - period).tmpl != st.tmpl) return false;
    }
    return true;
  };
  auto try_backlog_skip = [&](const BacklogMark& a, long long anchor) {
    const long long p_steps = anchor - a.anchor;
    const long long p_cycles = static_cast<long long>(cycle_ - a.cycle);
    const long long d_opix = opix_ - a.opix;
    if (p_steps <= 0 || p_cycles <= 0 || d_opix <= 0) return false;
    const long long newest = newest_relevant_;
    if (newest >= a.end || a.oldest < steps_base_) return false;  // (1) for the period seen
    const long long gate = a.opix / per_channel_;
    if (!repeats(a.oldest, newest, p_steps, a.oldest, gate)) return false;
    const long long k_cap = (total_outputs_ - 1 - opix_) / d_opix;  // (4)
    if (k_cap <= 0) return false;
    std::vector<ControllerState> at_period{controller_state()};
    long long k = 0;
    for (long long j = 1; j <= k_cap; ++j) {
      const long long end = steps_base_ + static_cast<long long>(steps_.size());
      const long long need = newest + j * p_steps;
      if (end <= need) break;                                                  // (1)
      if (!repeats(need - p_steps + 1, need, p_steps, a.oldest, gate)) break;  // (2), (3)
      if (!replay_controller(p_cycles, opix_ + (j - 1) * d_opix, opix_ + j * d_opix)) break;
      at_period.push_back(controller_state());
      k = j;
    }
    restore_controller(at_period[static_cast<std::size_t>(k)]);
    if (k == 0) return false;
    cycle_ += static_cast<std::uint64_t>(k * p_cycles);
    for (std::size_t i = 0; i < cnt_.size(); ++i)
      cnt_[i] += static_cast<std::uint64_t>(k) * (cnt_[i] - a.counters[i]);
    opix_ += k * d_opix;
    for (std::size_t v = 0; v < vnat_count_.size(); ++v)
      vnat_count_[v] += k * (vnat_count_[v] - a.vnat[v]);
    for (int port = 0; port < ports_; ++port)
      if (port_relevant_[port]) cursor_[port].step += k * p_steps;
    oldest_relevant_ += k * p_steps;
    newest_relevant_ += k * p_steps;
    anchor_scan = oldest_relevant_ + 1;
    values_valid_ = false;
    ++skips;
    return true;
  };
  auto backlog_point = [&]() {
    // The newest row start the oldest relevant cursor has reached, if it passed a new one.
    long long anchor = -1;
    long long i = std::max(anchor_scan, steps_base_);
    for (; i <= oldest_relevant_ && i < steps_base_ + static_cast<long long>(steps_.size()); ++i) {
      const Step& st = step_at(i);
      if (st.tmpl != 0 && st.idxY == 0 && st.idxC == 0 && st.idxR == 0 && st.idxS == 0) anchor = i;
    }
    anchor_scan = i;
    // Points 64 cycles apart at least: a state costs about as much as a few cycles.
    if (anchor < 0 || cycle_ - last_backlog_point < 64) return false;
    last_backlog_point = cycle_;
    state.clear();
    fabric_state(state);
    for (int port = 0; port < ports_; ++port)
      if (port_relevant_[port])
        state.push_back(static_cast<std::uint64_t>(cursor_[port].step - anchor) << 32 |
                        cursor_[port].pos);
    const std::uint64_t h = fingerprint(0x59, state);
    auto it = backlog_points.find(h);
    if (it != backlog_points.end() && it->second.state == state &&
        try_backlog_skip(it->second, anchor))
      return true;
    if (backlog_points.size() >= 64) forget_backlog();
    BacklogMark m{anchor,
                  cycle_,
                  cnt_,
                  opix_,
                  vnat_count_,
                  oldest_relevant_,
                  steps_base_ + static_cast<long long>(steps_.size()),
                  state};
    if (keep_from_ < 0 || m.oldest < keep_from_) keep_from_ = m.oldest;
    backlog_points[h] = std::move(m);
    return false;
  };
  auto try_skip = [&](const Mark& a, long long here) {
    const long long p = here - a.index;
    const auto [periods, to_end] = skippable(a, here, p);
    if (periods == 0) return false;
    std::vector<std::uint64_t> d_counters(cnt_.size());
    for (std::size_t i = 0; i < cnt_.size(); ++i) d_counters[i] = cnt_[i] - a.counters[i];
    std::vector<long long> d_vnat(vnat_count_.size());
    for (std::size_t v = 0; v < vnat_count_.size(); ++v) d_vnat[v] = vnat_count_[v] - a.vnat[v];
    jump(to_end ? last_point : here + periods * p, periods, cycle_ - a.cycle, d_counters,
         opix_ - a.opix, d_vnat);
    if (to_end) finished_ = true;
    ++skips;
    weight_points.clear();
    row_points.clear();
    candidate.reset();
    forget_backlog();
    return true;
  };
  while (!finished_) {
    if (fast_ && at_point()) {
      const long long here = point_index();
      bool skipped = false;
      if (cX_ == 0) {
        canonical_state(state, true);
        const std::uint64_t h = fingerprint(0x57, state);
        row_points.clear();
        // Row points help only while an iteration is long and the fabric repeats within it;
        // after a whole iteration without such a repeat, stop fingerprinting them.
        if (here > 0 && skips == 0) rows_useful = false;
        auto it = weight_points.find(h);
        if (it != weight_points.end() && it->second.state == state)
          skipped = try_skip(it->second, here);
        if (!skipped) weight_points[h] = mark_here(true);
      } else if (candidate && here == candidate->first.index + candidate->second) {
        canonical_state(state, true);
        if (state == candidate->first.state) skipped = try_skip(candidate->first, here);
        candidate.reset();
      } else if (rows_useful) {
        if (candidate && here > candidate->first.index + candidate->second) candidate.reset();
        canonical_state(state, false);
        const std::uint64_t h = fingerprint(0x58, state);
        auto it = row_points.find(h);
        if (!candidate && it != row_points.end() && it->second < here &&
            here + 2 * (here - it->second) <= points) {
          canonical_state(state, true);
          candidate = std::make_pair(mark_here(true), here - it->second);
        }
        row_points[h] = here;
      }
      if (skipped) continue;  // look at the new position again
    }
    // (The marks of the points above stay: their states are exact after a backlog skip too.)
    if (backlog && stepped > 0 && backlog_point()) {
      forget_backlog();
      continue;
    }
    step();
    ++stepped;
    require(stepped < 4'000'000'000ULL,
            "simulation exceeded 4e9 cycles; the tile is too small for this layer");
  }
  EngineRun out;
  out.cycles = cycle_;
  out.simulated_cycles = stepped;
  out.skips = skips;
  out.gb = skips ? maeri_traffic(hw_, op_, t_) : gb_;
  for (int i = 0; i < ms_; ++i) out.multiplications += cnt_[c_mult_ + i];
  out.counters = counters_file(out.gb);
  out.output_from_fabric = values_valid_;
  if (data_) {
    out.output = std::move(output_);
    out.from_fabric = std::move(from_fabric_);
  }
  return out;
}

CountersFile MaeriMachine::counters_file(const GlobalBufferTraffic& gb) const {
  CountersFile f;
  f.cycles = cycle_;
  auto line = [](std::string comp, OpList ops) {
    return CounterLine{std::move(comp), std::move(ops)};
  };
  const int dn_switches = per_port_ - 1;
  std::vector<std::uint64_t> dnc(c_end_, 0);  // distribution counters, indexed like cnt_
  if (dn_tree_) {
    const Template* templates[3] = {&weight_template_, &input_template_[0], &input_template_[1]};
    for (int t = 0; t < 3; ++t)
      for (std::size_t q = 0; q < templates[t]->parts.size(); ++q) {
        const std::uint64_t times = cnt_[part_base_[t] + q];
        if (!times) continue;
        const auto& part = templates[t]->parts[q];
        count_dn_route(part.port, templates[t]->dests.data() + part.begin, part.count, times, dnc);
      }
    for (int ms = 0; ms < ms_; ++ms)
      if (cnt_[c_psum_to_ + ms]) count_dn_route(ms / per_port_, &ms, 1, cnt_[c_psum_to_ + ms], dnc);
  }
  CounterSection dn{"DSNetwork", {}};
  dn.lines.reserve(static_cast<std::size_t>(ports_) * (1 + 3 * (per_port_ - 1)));
  for (int p = 0; p < ports_; ++p)
    dn.lines.push_back(line("DN_WIRE", {{"WRITE", cnt_[c_dn_top_ + p]}, {"READ", 0}}));
  for (int p = 0; p < ports_; ++p) {
    for (int w = 0; w < 2 * dn_switches; ++w)
      dn.lines.push_back(
          line("DN_WIRE",
               {{"WRITE", dnc[c_dn_wire_ + static_cast<std::size_t>(p) * 2 * dn_switches + w]},
                {"READ", 0}}));
    for (int s = 0; s < dn_switches; ++s)
      dn.lines.push_back(line(
          "SWITCH",
          {{"ROUTE_UNICAST", dnc[c_dn_uni_ + static_cast<std::size_t>(p) * dn_switches + s]},
           {"ROUTE_BROADCAST", dnc[c_dn_bc_ + static_cast<std::size_t>(p) * dn_switches + s]}}));
  }
  CounterSection mn{"MSNetwork", {}};
  mn.lines.reserve(4096);
  for (int i = 0; i < ms_ - 1; ++i)
    mn.lines.push_back(line("MN_WIRE", {{"WRITE", cnt_[c_mn_wire_ + i]}, {"READ", 0}}));
  for (int i = 0; i < ms_; ++i)
    mn.lines.push_back(line("MULTIPLIER", {{"MULTIPLICATION", cnt_[c_mult_ + i]},
                                           {"FORWARD_PSUM", cnt_[c_fwd_psum_ + i]},
                                           {"CONFIGURATION", ms_vn_[i] >= 0 ? 1u : 0u}}));
  CounterSection rn{"ReduceNetwork", {}};
  rn.lines.reserve(8192);
  const int nodes = tree_.node_count();
  for (int w = 0; w < 2 * nodes; ++w)
    rn.lines.push_back(line("RN_WIRE", {{"WRITE", cnt_[c_rn_wire_ + w]}, {"READ", 0}}));
  for (std::size_t link = 0; link < fw_link_.size(); ++link) {
    std::uint64_t writes = 0;
    for (int id = 0; id < nodes; ++id)
      if (node_fw_link_[id] == static_cast<int>(link)) writes += cnt_[c_rn_fw_ + id];
    rn.lines.push_back(line("RN_WIRE", {{"WRITE", writes}, {"READ", 0}}));
  }
  if (hw_.rn == ReduceNetwork::Fen)
    for (int id = 0; id < nodes; ++id)
      if (id != tree_.fen_special())
        rn.lines.push_back(line("RN_WIRE", {{"WRITE", cnt_[c_rn_up_ + id]}, {"READ", 0}}));
  for (int id = 0; id < nodes; ++id)
    rn.lines.push_back(line("ADDER", {{"ADD_2_1", cnt_[c_add21_ + id]},
                                      {"ADD_3_1", cnt_[c_add31_ + id]},
                                      {"CONFIGURATION", tree_.nodes[id].configured ? 1u : 0u}}));
  if (acc_) {
    for (int k = 0; k < ms_ - 1; ++k)
      rn.lines.push_back(line("RN_WIRE", {{"WRITE", cnt_[c_acc_wire_ + k]}, {"READ", 0}}));
    for (int k = 0; k < ms_ - 1; ++k)
      rn.lines.push_back(line("ACCUMULATOR", {{"READ", cnt_[c_acc_rd_ + k]},
                                              {"WRITE", cnt_[c_acc_wr_ + k]},
                                              {"ADD", cnt_[c_acc_add_ + k]}}));
  }
  CounterSection buffer{"GlobalBuffer",
                        {line("GLOBALBUFFER", {{"READ", gb.reads()}, {"WRITE", gb.writes()}})}};
  CounterSection cb{"CollectionBus", {}};
  cb.lines.reserve(static_cast<std::size_t>(lines_) * (bus_ports_ + 1));
  for (int l = 0; l < lines_; ++l) {
    for (int p = 0; p < bus_ports_; ++p)
      cb.lines.push_back(line(
          "CB_WIRE",
          {{"WRITE", cnt_[c_cb_in_ + static_cast<std::size_t>(l) * bus_ports_ + p]}, {"READ", 0}}));
    cb.lines.push_back(line("CB_WIRE", {{"WRITE", cnt_[c_cb_out_ + l]}, {"READ", 0}}));
  }
  f.sections.reserve(5);
  for (CounterSection* s : {&dn, &mn, &rn, &buffer, &cb}) f.sections.push_back(std::move(*s));
  return f;
}

}  // namespace

EngineRun run_maeri(const HardwareConfig& hw, const DenseOp& op, const Tile& tile,
                    const EngineOptions& options) {
  MaeriMachine machine(hw, op, tile, options);
  return machine.run();
}

}  // namespace telar::sim
