// The sparse engines: STONNE's SIGMA_SPARSE_GEMM and MAGMA_SPARSE_DENSE controllers driving the
// LINEAR multiplier array and the ART reduction network (with the accumulation buffer for MAGMA).
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
//  * SIGMA: the stationary non-zeros are packed, row after row, into clusters of multipliers;
//    a row longer than the array is folded: its first part uses the whole array, later parts
//    keep multiplier 0 for the partial sum read back from the Global Buffer. Each streamed
//    element is multicast to the multipliers holding a stationary non-zero of its column.
//  * MAGMA: for each sparse row, T_N neurons of T_K multipliers; the row's non-zeros are
//    distributed T_K at a time (multicast to the T_N neurons), then the dense rows they select
//    are streamed T_N columns × T_K non-zeros per step, accumulated over the row's K folds.
#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include "core/error.hpp"
#include "sim/engine.hpp"
#include "sim/reduce_tree.hpp"
#include "sim/ring.hpp"

namespace telar::sim {

namespace {

enum Kind : std::uint8_t { kWeight = 0, kInput = 1, kPsum = 2 };

struct Psum {
  float value;
  int vn;
};

// A link carrying partial sums: one pending batch.
struct Link {
  bool pending = false;
  std::vector<Psum> items;
  void send(const Psum* batch, std::size_t count) {
    items.assign(batch, batch + count);
    pending = true;
  }
  void send_one(Psum p) {
    items.assign(1, p);
    pending = true;
  }
  template <typename F>
  void take(F&& f) {
    pending = false;
    for (const Psum& p : items) f(p);
  }
};

struct MsInput {
  bool pending = false;
  Kind kind = kWeight;
  float value = 0;
};

struct Act {
  float value;
  bool psum;
};

struct PortPacket {
  Kind kind;
  float value;
  std::uint32_t count;  // destinations, queued in the port's destination ring
};

int log2_of(int v) {
  int l = 0;
  while ((1 << l) < v) ++l;
  return l;
}

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
  std::vector<Link> bus_in_;
  std::vector<Ring<Psum>> bus_fifo_;
  std::vector<int> bus_rr_;
  std::vector<long long> bus_queued_;
  std::vector<Link> bus_out_;
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

SparseMachine::SparseMachine(const HardwareConfig& hw, const SparseEngineOptions& options)
    : hw_(hw), fast_(options.fast), values_(options.values) {
  ms_ = hw.ms_size;
  ports_ = hw.dn_bw;
  per_port_ = ms_ / ports_;
  dn_levels_ = log2_of(per_port_);
  dn_tree_ = per_port_ > 1;
  acc_ = hw.accumulation_buffer;
  lines_ = hw.rn_bw;
  levels_ = log2_of(ms_);

  in_fifo_.resize(ports_);
  psum_fifo_.resize(ports_);
  in_dests_.resize(ports_);
  psum_dests_.resize(ports_);
  latch_full_.assign(ports_, 0);
  latch_kind_.assign(ports_, kWeight);
  latch_value_.assign(ports_, 0.0f);
  latch_dests_.resize(ports_);

  ms_vn_.assign(ms_, -1);
  ms_nf_.assign(ms_, 1);
  ms_direct_.assign(ms_, 0);
  ms_act_.resize(ms_);
  ms_w_.resize(ms_);
  ms_in_.resize(ms_);

  const int nodes = ms_ - 1;
  nd_.resize(nodes);
  node_fw_link_.assign(nodes, -1);
  nd_even_.assign(nodes, 0);
  for (int l = 0; l < levels_; ++l)
    for (int j = 0; j < (1 << l); ++j) nd_even_[ReduceTree::index(l, j)] = j % 2 == 0;
  for (int l = 1; l < levels_; ++l)
    for (int j = 2; j < (1 << l); j += 2) {
      const int id = static_cast<int>(fw_link_.size());
      fw_link_.emplace_back();
      node_fw_link_[ReduceTree::index(l, j - 1)] = id;
      node_fw_link_[ReduceTree::index(l, j)] = id;
    }
  parent_link_.assign(nodes, -1);
  for (int l = 1; l < levels_; ++l)
    for (int j = 0; j < (1 << l); ++j)
      parent_link_[ReduceTree::index(l, j)] = ReduceTree::index(l - 1, j / 2) * 2 + (j % 2);
  nd_out_.assign(nodes, Out::Parent);
  nd_out_index_.assign(nodes, -1);

  wiring_ = wire_collection_bus(ReduceNetwork::Art, ms_, lines_);
  bus_ports_ = wiring_.ports_per_line;
  bus_in_.resize(static_cast<std::size_t>(lines_) * bus_ports_);
  bus_fifo_.resize(bus_in_.size());
  bus_rr_.assign(lines_, 0);
  bus_queued_.assign(lines_, 0);
  bus_out_.resize(lines_);
  acc_of_node_.assign(nodes, -1);
  for (int k = 0; k < static_cast<int>(wiring_.order.size()); ++k)
    acc_of_node_[wiring_.order[k]] = k;
  if (acc_) {
    acc_in_.resize(nodes);
    acc_fifo_.resize(nodes);
    acc_reg_.assign(nodes, Psum{0, 0});
    acc_count_.assign(nodes, 0);
    acc_bus_.assign(nodes, 0);
    for (int k = 0; k < nodes; ++k) {
      const int node = wiring_.order[k];
      acc_bus_[k] = wiring_.line[node] * bus_ports_ + wiring_.port[node];
    }
  }

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
  c_ms_conf_ = take(ms_);
  c_rn_wire_ = take(2 * static_cast<std::size_t>(nodes));
  c_rn_fw_ = take(nodes);
  c_add21_ = take(nodes);
  c_add31_ = take(nodes);
  c_add_conf_ = take(nodes);
  c_acc_wire_ = take(acc_ ? nodes : 0);
  c_acc_rd_ = take(acc_ ? nodes : 0);
  c_acc_wr_ = take(acc_ ? nodes : 0);
  c_acc_add_ = take(acc_ ? nodes : 0);
  c_cb_in_ = take(static_cast<std::size_t>(lines_) * bus_ports_);
  c_cb_out_ = take(lines_);
  c_gb_w_ = take(1);
  c_gb_i_ = take(1);
  c_gb_pr_ = take(1);
  c_gb_pw_ = take(1);
  c_end_ = off;
  cnt_.assign(c_end_, 0);
}

// ------------------------------------------------------------------------------------------
// Fabric

// Reconfigures the array for contiguous neurons of the given sizes from multiplier 0 on. A
// neuron whose `psum_first` is set keeps its first multiplier for the partial sum read back
// from the Global Buffer. Every multiplier reuses `n_folding` weights; with the accumulation
// buffer every neuron's output accumulates `n_folding` partial sums.
void SparseMachine::configure(const std::vector<int>& sizes,
                              const std::vector<std::uint8_t>& psum_first, int n_folding) {
  std::fill(ms_vn_.begin(), ms_vn_.end(), -1);
  std::fill(ms_direct_.begin(), ms_direct_.end(), 0);
  std::fill(ms_nf_.begin(), ms_nf_.end(), n_folding);
  for (int i = 0; i < ms_; ++i) {
    ms_act_[i].clear();
    ms_w_[i].clear();
  }
  int ms = 0;
  for (std::size_t v = 0; v < sizes.size(); ++v)
    for (int j = 0; j < sizes[v]; ++j, ++ms) {
      ms_vn_[ms] = static_cast<int>(v);
      ms_direct_[ms] = psum_first[v] && j == 0;
      ++cnt_[c_ms_conf_ + ms];
    }
  acc_folds_ = n_folding;
  ++reconfigurations_;
  if (acc_) std::fill(acc_count_.begin(), acc_count_.end(), 0);
  if (sizes != configured_sizes_) {
    configured_sizes_ = sizes;
    tree_ = compile_reduce_tree(ReduceNetwork::Art, ms_, sizes);
    const int nodes = tree_.node_count();
    for (int id = 0; id < nodes; ++id) {
      const AdderConfig& c = tree_.nodes[id];
      if (c.to_memory) {
        nd_out_[id] = Out::Memory;
        nd_out_index_[id] =
            acc_ ? acc_of_node_[id] : wiring_.line[id] * bus_ports_ + wiring_.port[id];
      } else if (id == 0) {
        nd_out_[id] = Out::Lookup;
      } else {
        nd_out_[id] = Out::Parent;
        nd_out_index_[id] = parent_link_[id];
      }
    }
    // Adders run root first, then level by level; a pair joined by an active augmented link
    // runs receiver first.
    node_order_.assign(1, 0);
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
  for (int id = 0; id < tree_.node_count(); ++id)
    if (tree_.nodes[id].configured) ++cnt_[c_add_conf_ + id];
}

// A packet the controller sends, split over the read ports of its destinations (ascending).
void SparseMachine::push_to_ports(Kind kind, float value, const int* dests, std::uint32_t count) {
  std::uint32_t i = 0;
  while (i < count) {
    const int port = dests[i] / per_port_;
    std::uint32_t j = i;
    while (j < count && dests[j] / per_port_ == port) ++j;
    Ring<PortPacket>& fifo = kind == kPsum ? psum_fifo_[port] : in_fifo_[port];
    Ring<int>& ring = kind == kPsum ? psum_dests_[port] : in_dests_[port];
    fifo.push(PortPacket{kind, value, j - i});
    for (std::uint32_t k = i; k < j; ++k) ring.push(dests[k]);
    i = j;
  }
}

void SparseMachine::receive_results() {
  if (mem_in_.pending) mem_in_.take([&](const Psum& p) { write_fifo_.push(p); });
  for (int l = 0; l < lines_; ++l)
    if (bus_out_[l].pending) bus_out_[l].take([&](const Psum& p) { write_fifo_.push(p); });
}

void SparseMachine::send_ports() {
  for (int port = 0; port < ports_; ++port) {
    Ring<PortPacket>* fifo = !psum_fifo_[port].empty() ? &psum_fifo_[port] : &in_fifo_[port];
    Ring<int>* ring = fifo == &psum_fifo_[port] ? &psum_dests_[port] : &in_dests_[port];
    if (fifo->empty()) continue;
    const PortPacket p = fifo->pop();
    std::vector<int>& dests = latch_dests_[port];
    dests.resize(p.count);
    for (std::uint32_t k = 0; k < p.count; ++k) dests[k] = ring->pop();
    ++cnt_[c_dn_top_ + port];
    if (dn_tree_) {
      count_dn_route(port, dests.data(), p.count);
      latch_full_[port] = 1;
      latch_kind_[port] = p.kind;
      latch_value_[port] = p.value;
    } else {
      deliver(p.kind, p.value, dests.data(), p.count);
    }
  }
}

void SparseMachine::deliver(Kind kind, float value, const int* dests, std::uint32_t count) {
  for (std::uint32_t i = 0; i < count; ++i) {
    MsInput& in = ms_in_[dests[i]];
    in.pending = true;
    in.kind = kind;
    in.value = value;
  }
}

void SparseMachine::count_dn_route(int port, const int* dests, std::uint32_t count) {
  // A switch of the port's binary tree routes left and/or right where a destination lies.
  const int base = port * per_port_;
  const int switches = per_port_ - 1;
  struct Frame {
    int level, j;
    std::uint32_t lo, hi;
  };
  Frame stack[64];
  int top = 0;
  stack[top++] = {0, 0, 0, count};
  while (top) {
    const Frame f = stack[--top];
    const int span = per_port_ >> f.level;
    const int mid = base + f.j * span + span / 2;
    std::uint32_t split = f.lo;
    while (split < f.hi && dests[split] < mid) ++split;
    const bool left = split > f.lo, right = f.hi > split;
    const int sw = (1 << f.level) - 1 + f.j;
    const std::size_t at = static_cast<std::size_t>(port) * switches + sw;
    ++cnt_[(left && right ? c_dn_bc_ : c_dn_uni_) + at];
    const std::size_t wire = c_dn_wire_ + static_cast<std::size_t>(port) * 2 * switches +
                             static_cast<std::size_t>(2 * sw);
    if (left) {
      ++cnt_[wire];
      if (f.level + 1 < dn_levels_) stack[top++] = {f.level + 1, 2 * f.j, f.lo, split};
    }
    if (right) {
      ++cnt_[wire + 1];
      if (f.level + 1 < dn_levels_) stack[top++] = {f.level + 1, 2 * f.j + 1, split, f.hi};
    }
  }
}

void SparseMachine::bus_cycle() {
  for (int l = 0; l < lines_; ++l) {
    const std::size_t base = static_cast<std::size_t>(l) * bus_ports_;
    for (int p = 0; p < bus_ports_; ++p) {
      Link& in = bus_in_[base + p];
      if (in.pending) {
        bus_queued_[l] += static_cast<long long>(in.items.size());
        in.take([&](const Psum& v) { bus_fifo_[base + p].push(v); });
      }
    }
    if (bus_queued_[l] == 0) continue;  // an empty line scans all inputs and ends where it began
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

void SparseMachine::accumulator_cycle(int k) {
  Link& in = acc_in_[k];
  if (in.pending) in.take([&](const Psum& v) { acc_fifo_[k].push(v); });
  if (acc_fifo_[k].empty()) return;
  const Psum v = acc_fifo_[k].pop();
  if (acc_count_[k] == 0) {
    acc_reg_[k] = v;
    ++cnt_[c_acc_wr_ + k];
  } else {
    if (acc_reg_[k].vn != v.vn) internal("two neurons meet in one accumulator");
    acc_reg_[k].value += v.value;
    ++cnt_[c_acc_add_ + k];
    ++cnt_[c_acc_rd_ + k];
    ++cnt_[c_acc_wr_ + k];
  }
  if (acc_count_[k] == acc_folds_ - 1) {
    acc_count_[k] = 0;
    bus_in_[acc_bus_[k]].send_one(acc_reg_[k]);
    ++cnt_[c_cb_in_ + acc_bus_[k]];
  } else {
    ++acc_count_[k];
  }
}

void SparseMachine::node_cycle(int id) {
  const AdderConfig& c = tree_.nodes[id];
  Node& nd = nd_[id];
  const int fw = node_fw_link_[id];
  if (nd.in[0].pending) nd.in[0].take([&](const Psum& v) { nd.left.push(v); });
  if (nd.in[1].pending) nd.in[1].take([&](const Psum& v) { nd.right.push(v); });
  if (c.link == LinkDir::Receive && fw >= 0 && fw_link_[fw].pending)
    fw_link_[fw].take([&](const Psum& v) { nd.fw.push(v); });
  if (nd.left.empty() && nd.right.empty()) return;
  out_fw_.clear();
  out_ps_.clear();
  Ring<Psum>& L = nd.left;
  Ring<Psum>& Rt = nd.right;
  const bool fw_enabled = c.link != LinkDir::None;
  std::vector<Psum>& straight = fw_enabled ? out_fw_ : out_ps_;
  switch (c.mode) {
    case AdderMode::Add21:
      if (!L.empty() && Rt.empty() && !c.right_enabled) straight.push_back(L.pop());
      if (!Rt.empty() && L.empty() && !c.left_enabled) straight.push_back(Rt.pop());
      if (!L.empty() && !Rt.empty()) {
        Psum a = L.pop();
        const Psum b = Rt.pop();
        if (a.vn != b.vn) internal("two neurons meet in one adder");
        a.value += b.value;
        ++cnt_[c_add21_ + id];
        straight.push_back(a);
      }
      break;
    case AdderMode::Add31:
      if (!L.empty() && !Rt.empty() && !nd.fw.empty()) {
        Psum a = L.pop();
        const Psum b = Rt.pop(), f = nd.fw.pop();
        if (a.vn != b.vn || a.vn != f.vn) internal("two neurons meet in one adder");
        a.value += b.value;
        a.value += f.value;
        ++cnt_[c_add31_ + id];
        out_ps_.push_back(a);
      }
      break;
    case AdderMode::Add11Fw11:
      if (nd_even_[id]) {
        if (!L.empty()) out_fw_.push_back(L.pop());
        if (!Rt.empty()) out_ps_.push_back(Rt.pop());
      } else {
        if (!L.empty()) out_ps_.push_back(L.pop());
        if (!Rt.empty()) out_fw_.push_back(Rt.pop());
      }
      break;
    case AdderMode::Fw22:
      while (!L.empty()) out_ps_.push_back(L.pop());
      while (!Rt.empty()) out_ps_.push_back(Rt.pop());
      break;
    case AdderMode::Fold:
      internal("folding node in an ART");
  }
  if (!out_fw_.empty() && fw >= 0) {
    fw_link_[fw].send(out_fw_.data(), out_fw_.size());
    ++cnt_[c_rn_fw_ + id];
  }
  if (out_ps_.empty()) return;
  switch (nd_out_[id]) {
    case Out::Memory:
      if (acc_) {
        acc_in_[nd_out_index_[id]].send(out_ps_.data(), out_ps_.size());
        ++cnt_[c_acc_wire_ + nd_out_index_[id]];
      } else {
        bus_in_[nd_out_index_[id]].send(out_ps_.data(), out_ps_.size());
        ++cnt_[c_cb_in_ + nd_out_index_[id]];
      }
      break;
    case Out::Lookup:
      lookup_in_.send(out_ps_.data(), out_ps_.size());
      break;
    case Out::Parent:
      child_link(nd_out_index_[id]).send(out_ps_.data(), out_ps_.size());
      ++cnt_[c_rn_wire_ + nd_out_index_[id]];
      break;
  }
}

void SparseMachine::multiplier_cycle(int i) {
  MsInput& in = ms_in_[i];
  if (in.pending) {
    in.pending = false;
    if (ms_vn_[i] < 0) internal("a value reached an unconfigured multiplier");
    if (in.kind == kInput) {
      ms_act_[i].push(Act{in.value, false});
    } else if (in.kind == kWeight) {
      if (static_cast<int>(ms_w_[i].size()) == ms_nf_[i]) ms_w_[i].clear();
      ms_w_[i].push(in.value);
    } else {
      ms_act_[i].push(Act{in.value, true});
      ++cnt_[c_fwd_psum_ + i];
    }
  }
  if (ms_act_[i].empty()) return;
  const int leaf = ReduceTree::index(levels_ - 1, i / 2) * 2 + (i % 2);
  if (ms_direct_[i]) {  // passes the partial sum from the Global Buffer into its neuron
    child_link(leaf).send_one(Psum{ms_act_[i].pop().value, ms_vn_[i]});
    ++cnt_[c_rn_wire_ + leaf];
    return;
  }
  if (static_cast<int>(ms_w_[i].size()) < ms_nf_[i]) return;
  const float activation = ms_act_[i].pop().value;
  const float weight = ms_w_[i].front();
  ms_w_[i].rotate();
  child_link(leaf).send_one(Psum{activation * weight, ms_vn_[i]});
  ++cnt_[c_rn_wire_ + leaf];
  ++cnt_[c_mult_ + i];
}

void SparseMachine::fabric_cycle() {
  bus_cycle();
  if (acc_)
    for (int k = 0; k < ms_ - 1; ++k) accumulator_cycle(k);
  for (int id : node_order_) node_cycle(id);
  if (lookup_in_.pending) {  // the lookup table passes the root's results to the controller
    std::swap(mem_in_, lookup_in_);
    lookup_in_.pending = false;
  }
  for (int i = 0; i < ms_; ++i) multiplier_cycle(i);
  if (dn_tree_)
    for (int port = 0; port < ports_; ++port) {
      if (!latch_full_[port]) continue;
      latch_full_[port] = 0;
      deliver(latch_kind_[port], latch_value_[port], latch_dests_[port].data(),
              static_cast<std::uint32_t>(latch_dests_[port].size()));
    }
}

// Nothing in flight anywhere (only the bus arbiters' positions carry over).
bool SparseMachine::idle() const {
  if (!write_fifo_.empty() || lookup_in_.pending || mem_in_.pending) return false;
  for (int p = 0; p < ports_; ++p)
    if (!in_fifo_[p].empty() || !psum_fifo_[p].empty() || latch_full_[p]) return false;
  for (int i = 0; i < ms_; ++i)
    if (ms_in_[i].pending || !ms_act_[i].empty()) return false;
  for (const Node& n : nd_)
    if (n.in[0].pending || n.in[1].pending || !n.left.empty() || !n.right.empty() || !n.fw.empty())
      return false;
  for (const Link& l : fw_link_)
    if (l.pending) return false;
  for (std::size_t k = 0; k < acc_in_.size(); ++k)
    if (acc_in_[k].pending || !acc_fifo_[k].empty()) return false;
  for (std::size_t k = 0; k < bus_in_.size(); ++k)
    if (bus_in_[k].pending || !bus_fifo_[k].empty()) return false;
  for (int l = 0; l < lines_; ++l)
    if (bus_out_[l].pending || bus_queued_[l] != 0) return false;
  return true;
}

// ------------------------------------------------------------------------------------------
// MAGMA_SPARSE_DENSE

EngineRun SparseMachine::run_magma(const SparseDenseOp& op, const SparseDenseTile& t) {
  const int M = op.M, N = op.N, T_N = t.T_N, T_K = t.T_K;
  const int iter_N = (N + T_N - 1) / T_N;
  const long long n_and_pad = 1LL * iter_N * T_N;
  const CsrMatrix& mk = op.mk;
  const bool with_values = values_ && !op.kn.empty();
  std::vector<float> expected;
  if (with_values) {
    expected = reference_output(op);
    output_.assign(expected.size(), 0.0f);
    from_fabric_.assign(expected.size(), 0);
  }
  // Rows without non-zeros never reach the fabric (STONNE would distribute zero folds of them
  // forever): their zero outputs are stored directly.
  auto retire_empty_rows = [&](int m) {
    while (m < M && mk.row_nnz(m) == 0) {
      direct_writes_ += static_cast<std::uint64_t>(N);
      if (with_values)
        for (int n = 0; n < N; ++n) from_fabric_[static_cast<std::size_t>(m) * N + n] = 1;
      ++m;
    }
    return m;
  };
  long long nonempty = 0;
  int last_row = -1;
  for (int m = 0; m < M; ++m)
    if (mk.row_nnz(m) > 0) ++nonempty, last_row = m;
  const long long total_outputs = nonempty * n_and_pad;

  int cur_m = retire_empty_rows(0), out_row = cur_m, cur_n = 0, cur_k = 0, iter_K = 0;
  std::int64_t k_nnz = 0, sta_base = 0;
  bool sta_complete = false;
  long long current_output = 0, output_iteration = 0;
  std::vector<int> itern(static_cast<std::size_t>(T_N), 0);
  std::vector<int> dests(static_cast<std::size_t>(std::max(T_N, T_K)));
  const std::vector<int> sizes(static_cast<std::size_t>(T_N), T_K);
  const std::vector<std::uint8_t> no_psum(static_cast<std::size_t>(T_N), 0);
  if (total_outputs == 0) return finish(0, 0);

  // Fast mode: a row's timing and counts depend only on its number of non-zeros and on where
  // the bus arbiters stand when it starts (the fabric is otherwise empty), so rows already seen
  // in the same situation are skipped.
  struct RowMark {
    std::uint64_t cycle;
    std::vector<std::uint64_t> counters;
    std::vector<int> bus_rr;
  };
  struct RowEffect {
    std::uint64_t cycles;
    std::vector<std::uint64_t> d_counters;
    std::vector<int> bus_rr_after;
  };
  std::map<std::pair<std::int64_t, std::vector<int>>, RowEffect> seen;
  std::optional<std::pair<std::pair<std::int64_t, std::vector<int>>, RowMark>> recording;
  std::uint64_t stepped = 0;
  int skips = 0;

  auto row_output_from_reference = [&](int m) {
    if (!with_values) return;
    for (int n = 0; n < N; ++n) {
      const std::size_t at = static_cast<std::size_t>(m) * N + n;
      output_[at] = expected[at];
    }
  };

  while (true) {
    if (state_ == State::Configuring && fast_) {
      if (recording) {  // the row being recorded ended here
        RowEffect e;
        e.cycles = cycle_ - recording->second.cycle;
        e.d_counters.resize(cnt_.size());
        for (std::size_t i = 0; i < cnt_.size(); ++i)
          e.d_counters[i] = cnt_[i] - recording->second.counters[i];
        e.bus_rr_after = bus_rr_;
        seen.emplace(recording->first, std::move(e));
        recording.reset();
      }
    }
    if (state_ == State::Configuring && fast_ && cur_m != last_row && idle()) {
      auto key = std::make_pair(mk.row_nnz(cur_m), bus_rr_);
      auto it = seen.find(key);
      if (it != seen.end()) {
        const RowEffect& e = it->second;
        cycle_ += e.cycles;
        for (std::size_t i = 0; i < cnt_.size(); ++i) cnt_[i] += e.d_counters[i];
        bus_rr_ = e.bus_rr_after;
        ++reconfigurations_;
        row_output_from_reference(cur_m);
        current_output += n_and_pad;
        ++skips;
        cur_m = retire_empty_rows(cur_m + 1);
        out_row = cur_m;
        continue;
      }
      recording.emplace(std::move(key), RowMark{cycle_, cnt_, bus_rr_});
    }
    ++cycle_;
    ++stepped;
    require(stepped < 4'000'000'000ULL, "simulation exceeded 4e9 cycles");
    // --- controller ---
    if (state_ == State::Configuring) {
      k_nnz = mk.row_nnz(cur_m);
      sta_base = mk.row_ptr[cur_m];
      iter_K = static_cast<int>((k_nnz + T_K - 1) / T_K);
      out_row = cur_m;
      configure(sizes, no_psum, iter_K);
      cur_k = 0;
      sta_complete = false;
    } else if (state_ == State::DistSta) {
      for (int j = 0; j < T_K; ++j) {
        const std::int64_t index_k = 1LL * cur_k * T_K + j;
        for (int i = 0; i < T_N; ++i) dests[i] = i * T_K + j;
        const bool real = index_k < k_nnz;
        if (real) ++cnt_[c_gb_w_];
        push_to_ports(kWeight, real && with_values ? mk.values[sta_base + index_k] : 0.0f,
                      dests.data(), static_cast<std::uint32_t>(T_N));
      }
      if (++cur_k == iter_K) {
        cur_k = 0;
        sta_complete = true;
      }
    } else if (state_ == State::DistStr) {
      for (int i = 0; i < T_N; ++i) {
        const int index_n = cur_n * T_N + i;
        for (int j = 0; j < T_K; ++j) {
          const std::int64_t index_k = 1LL * cur_k * T_K + j;
          const bool real = index_k < k_nnz && index_n < N;
          float v = 0.0f;
          if (real) {
            ++cnt_[c_gb_i_];
            if (with_values)
              v = op.kn[static_cast<std::size_t>(mk.col[sta_base + index_k]) * N + index_n];
          }
          const int dest = i * T_K + j;
          push_to_ports(kInput, v, &dest, 1);
        }
      }
      if (++cur_k == iter_K) {
        cur_k = 0;
        if (++cur_n == iter_N) {
          cur_n = 0;
          cur_m = retire_empty_rows(cur_m + 1);
          sta_complete = true;
        }
      }
    }
    receive_results();
    for (std::size_t n = (write_fifo_.size() + 1) / 2; n > 0; --n) {
      const Psum p = write_fifo_.pop();
      const int vn = p.vn;
      const int col = itern[vn] * T_N + vn;
      if (col < N) {
        ++cnt_[c_gb_pw_];
        if (with_values) {
          const std::size_t at = static_cast<std::size_t>(out_row) * N + col;
          output_[at] = p.value;
          from_fabric_[at] = 1;
        }
      }
      if (++itern[vn] == iter_N) itern[vn] = 0;
      if (++current_output == total_outputs) execution_finished_ = true;
      if (++output_iteration == n_and_pad) {
        output_iteration = 0;
        if (state_ == State::Waiting) sta_complete = true;
      }
    }
    switch (state_) {
      case State::Configuring:
        state_ = State::DistSta;
        break;
      case State::DistSta:
        if (sta_complete) {
          state_ = State::DistStr;
          sta_complete = false;
        }
        break;
      case State::DistStr:
        if (cur_m >= M) {
          state_ = State::AllSent;
        } else if (sta_complete) {
          state_ = State::Waiting;
          sta_complete = false;
        }
        break;
      case State::Waiting:
        if (sta_complete) state_ = State::Configuring;
        break;
      case State::AllSent:
        break;
    }
    send_ports();
    fabric_cycle();
    if (execution_finished_) break;
  }
  if (with_values)
    for (std::size_t i = 0; i < output_.size(); ++i)
      if (!from_fabric_[i]) output_[i] = expected[i];
  return finish(stepped, skips);
}

// ------------------------------------------------------------------------------------------
// SIGMA_SPARSE_GEMM

EngineRun SparseMachine::run_sigma(const SparseGemmOp& op) {
  const bool mk_stationary = op.dataflow == SparseDataflow::MkStaKnStr;
  const CsrMatrix& sta = mk_stationary ? op.mk : op.kn_t;
  const CsrMatrix& str = mk_stationary ? op.kn_t : op.mk;
  const int dim_sta = sta.rows, dim_str = str.rows, K = op.K;
  // Output (stationary row i, streamed row s) is MK·KN at (i, s) or (s, i).
  auto out_index = [&](int i, int s) {
    return mk_stationary ? static_cast<std::size_t>(i) * op.N + s
                         : static_cast<std::size_t>(s) * op.N + i;
  };
  if (values_) {
    output_.assign(static_cast<std::size_t>(op.M) * op.N, 0.0f);
    from_fabric_.assign(output_.size(), 0);
  }
  // The streamed matrix as a bitmap (one bit per element) for the per-element tests.
  const std::size_t words_per_row = (static_cast<std::size_t>(K) + 63) / 64;
  std::vector<std::uint64_t> str_bits(static_cast<std::size_t>(dim_str) * words_per_row, 0);
  for (int s = 0; s < dim_str; ++s)
    for (std::int64_t e = str.row_ptr[s]; e < str.row_ptr[s + 1]; ++e)
      str_bits[s * words_per_row + static_cast<std::size_t>(str.col[e]) / 64] |=
          1ULL << (str.col[e] % 64);
  auto str_value = [&](int s, int j) {
    const auto first = str.col.begin() + str.row_ptr[s];
    const auto last = str.col.begin() + str.row_ptr[s + 1];
    return str.values[static_cast<std::size_t>(std::lower_bound(first, last, j) - str.col.begin())];
  };
  auto str_nnz_in = [&](int s, int lo, int hi) {  // streamed non-zeros of row s in [lo, hi)
    const auto first = str.col.begin() + str.row_ptr[s];
    const auto last = str.col.begin() + str.row_ptr[s + 1];
    return std::lower_bound(first, last, hi) - std::lower_bound(first, last, lo);
  };

  int sta_row = 0;  // first stationary row not finished
  int fold_j = 0;   // > 0: the next part of row sta_row starts at this column
  while (sta_row < dim_sta && sta.row_nnz(sta_row) == 0) ++sta_row;
  if (sta_row >= dim_sta) return finish(0, 0);

  // The current configuration.
  struct Cluster {
    int row;
    std::int64_t first, last;  // stationary entries [first, last) of the row
  };
  std::vector<Cluster> clusters;
  std::vector<int> sizes;
  std::vector<std::uint8_t> psum_first;
  int end_j = K, next_row = 0, str_index = 0;
  long long outputs_expected = 0, outputs_seen = 0;
  bool iteration_complete = false;
  std::vector<int> vnat;
  // Per column with stationary non-zeros in this configuration: the multipliers holding them.
  std::vector<int> columns;
  std::vector<std::uint32_t> column_first;
  std::vector<int> column_dests;
  std::vector<int> psum_dest{0};

  auto build_configuration = [&]() {
    clusters.clear();
    sizes.clear();
    psum_first.clear();
    const int num_ms = ms_;
    if (fold_j > 0) {
      // A later part of a folded row: multiplier 0 takes the partial sum.
      const std::int64_t begin = sta.row_ptr[sta_row], end = sta.row_ptr[sta_row + 1];
      std::int64_t first =
          std::lower_bound(sta.col.begin() + begin, sta.col.begin() + end, fold_j) -
          sta.col.begin();
      const std::int64_t last = std::min<std::int64_t>(end, first + (num_ms - 1));
      clusters.push_back(Cluster{sta_row, first, last});
      sizes.push_back(static_cast<int>(last - first) + 1);
      psum_first.push_back(1);
      end_j = last < end ? sta.col[last - 1] + 1 : K;
      next_row = end_j == K ? sta_row + 1 : sta_row;
    } else {
      // Whole rows while they fit; a first row longer than the array starts folding.
      int used = 0, r = sta_row;
      while (r < dim_sta) {
        const std::int64_t n = sta.row_nnz(r);
        if (n == 0) {
          ++r;
          continue;
        }
        if (used + n > num_ms) break;
        clusters.push_back(Cluster{r, sta.row_ptr[r], sta.row_ptr[r + 1]});
        sizes.push_back(static_cast<int>(n));
        psum_first.push_back(0);
        used += static_cast<int>(n);
        ++r;
      }
      // STONNE's compiler can make neighbouring small clusters share an adder (its adders then
      // abort); the configuration ends before such a cluster instead.
      while (clusters.size() > 1 &&
             neurons_mix(compile_reduce_tree(ReduceNetwork::Art, num_ms, sizes), sizes)) {
        r = clusters.back().row;
        clusters.pop_back();
        sizes.pop_back();
        psum_first.pop_back();
      }
      if (clusters.empty()) {
        const std::int64_t first = sta.row_ptr[sta_row];
        const std::int64_t last = first + num_ms;
        clusters.push_back(Cluster{sta_row, first, last});
        sizes.push_back(num_ms);
        psum_first.push_back(0);
        end_j = last < sta.row_ptr[sta_row + 1] ? sta.col[last - 1] + 1 : K;
        next_row = end_j == K ? sta_row + 1 : sta_row;
      } else {
        end_j = K;
        next_row = r;
      }
    }
    // Destinations per column.
    std::map<int, std::vector<int>> by_column;
    int ms = 0;
    for (std::size_t v = 0; v < clusters.size(); ++v) {
      if (psum_first[v]) ++ms;
      for (std::int64_t e = clusters[v].first; e < clusters[v].last; ++e)
        by_column[sta.col[e]].push_back(ms++);
    }
    columns.clear();
    column_first.clear();
    column_dests.clear();
    for (auto& [col, d] : by_column) {
      columns.push_back(col);
      column_first.push_back(static_cast<std::uint32_t>(column_dests.size()));
      std::sort(d.begin(), d.end());
      column_dests.insert(column_dests.end(), d.begin(), d.end());
    }
    column_first.push_back(static_cast<std::uint32_t>(column_dests.size()));
    vnat.assign(clusters.size(), 0);
    outputs_expected = static_cast<long long>(clusters.size()) * dim_str;
    outputs_seen = 0;
  };

  std::uint64_t stepped = 0;
  while (true) {
    ++cycle_;
    ++stepped;
    require(stepped < 4'000'000'000ULL, "simulation exceeded 4e9 cycles");
    if (state_ == State::Configuring) {
      build_configuration();
      configure(sizes, psum_first, 1);
    } else if (state_ == State::DistSta) {
      int ms = 0;
      for (std::size_t v = 0; v < clusters.size(); ++v) {
        if (psum_first[v]) ++ms;
        for (std::int64_t e = clusters[v].first; e < clusters[v].last; ++e) {
          ++cnt_[c_gb_w_];
          const int dest = ms++;
          push_to_ports(kWeight, values_ ? sta.values[e] : 0.0f, &dest, 1);
        }
      }
    } else if (state_ == State::DistStr) {
      const int s = str_index;
      const int init_j = fold_j;
      if (init_j > 0) {
        // The partial sum of this output from the previous part of the row.
        const float psum = values_ ? output_[out_index(clusters[0].row, s)] : 0.0f;
        ++cnt_[c_gb_pr_];
        push_to_ports(kPsum, psum, psum_dest.data(), 1);
      }
      // Streamed non-zeros with no stationary partner are read and go nowhere.
      cnt_[c_gb_i_] += static_cast<std::uint64_t>(str_nnz_in(s, init_j, end_j));
      const std::uint64_t* bits = &str_bits[s * words_per_row];
      for (std::size_t c = 0; c < columns.size(); ++c) {
        const int j = columns[c];
        if (j < init_j || j >= end_j) continue;
        const bool nonzero = (bits[j / 64] >> (j % 64)) & 1;
        push_to_ports(kInput, nonzero && values_ ? str_value(s, j) : 0.0f,
                      column_dests.data() + column_first[c], column_first[c + 1] - column_first[c]);
      }
      ++str_index;
    }
    receive_results();
    for (std::size_t n = (write_fifo_.size() + 1) / 2; n > 0; --n) {
      const Psum p = write_fifo_.pop();
      const int vn = p.vn;
      ++cnt_[c_gb_pw_];
      if (values_) {
        const std::size_t at = out_index(clusters[vn].row, vnat[vn]);
        output_[at] = p.value;
        from_fabric_[at] = 1;
      }
      ++vnat[vn];
      if (++outputs_seen == outputs_expected) iteration_complete = true;
    }
    switch (state_) {
      case State::Configuring:
        state_ = State::DistSta;
        break;
      case State::DistSta:
        state_ = State::DistStr;
        break;
      case State::DistStr:
        if (str_index == dim_str) state_ = State::Waiting;
        break;
      case State::Waiting:
        if (iteration_complete) {
          iteration_complete = false;
          str_index = 0;
          if (next_row == sta_row) {
            fold_j = end_j;
          } else {
            fold_j = 0;
            sta_row = next_row;
            while (sta_row < dim_sta && sta.row_nnz(sta_row) == 0) ++sta_row;
          }
          if (sta_row >= dim_sta) {
            execution_finished_ = true;
            state_ = State::AllSent;
          } else {
            state_ = State::Configuring;
          }
        }
        break;
      case State::AllSent:
        break;
    }
    send_ports();
    fabric_cycle();
    if (execution_finished_) break;
  }
  return finish(stepped, 0);
}

// ------------------------------------------------------------------------------------------

EngineRun SparseMachine::finish(std::uint64_t stepped, int skips) {
  EngineRun out;
  out.cycles = cycle_;
  out.simulated_cycles = stepped;
  out.skips = skips;
  out.reconfigurations = reconfigurations_;
  out.gb = traffic();
  for (int i = 0; i < ms_; ++i) out.multiplications += cnt_[c_mult_ + i];
  out.counters = counters_file();
  out.output_from_fabric = skips == 0;
  if (values_) {
    out.output = std::move(output_);
    out.from_fabric = std::move(from_fabric_);
  }
  return out;
}

CountersFile SparseMachine::counters_file() const {
  CountersFile f;
  f.cycles = cycle_;
  auto line = [](std::string comp, OpList ops) {
    return CounterLine{std::move(comp), std::move(ops)};
  };
  const int dn_switches = per_port_ - 1;
  CounterSection dn{"DSNetwork", {}};
  for (int p = 0; p < ports_; ++p)
    dn.lines.push_back(line("DN_WIRE", {{"WRITE", cnt_[c_dn_top_ + p]}, {"READ", 0}}));
  for (int p = 0; p < ports_; ++p) {
    for (int w = 0; w < 2 * dn_switches; ++w)
      dn.lines.push_back(
          line("DN_WIRE",
               {{"WRITE", cnt_[c_dn_wire_ + static_cast<std::size_t>(p) * 2 * dn_switches + w]},
                {"READ", 0}}));
    for (int s = 0; s < dn_switches; ++s)
      dn.lines.push_back(line(
          "SWITCH",
          {{"ROUTE_UNICAST", cnt_[c_dn_uni_ + static_cast<std::size_t>(p) * dn_switches + s]},
           {"ROUTE_BROADCAST", cnt_[c_dn_bc_ + static_cast<std::size_t>(p) * dn_switches + s]}}));
  }
  CounterSection mn{"MSNetwork", {}};
  for (int i = 0; i < ms_ - 1; ++i)
    mn.lines.push_back(line("MN_WIRE", {{"WRITE", cnt_[c_mn_wire_ + i]}, {"READ", 0}}));
  for (int i = 0; i < ms_; ++i)
    mn.lines.push_back(line("MULTIPLIER", {{"MULTIPLICATION", cnt_[c_mult_ + i]},
                                           {"FORWARD_PSUM", cnt_[c_fwd_psum_ + i]},
                                           {"CONFIGURATION", cnt_[c_ms_conf_ + i]}}));
  CounterSection rn{"ReduceNetwork", {}};
  const int nodes = ms_ - 1;
  for (int w = 0; w < 2 * nodes; ++w)
    rn.lines.push_back(line("RN_WIRE", {{"WRITE", cnt_[c_rn_wire_ + w]}, {"READ", 0}}));
  for (std::size_t link = 0; link < fw_link_.size(); ++link) {
    std::uint64_t writes = 0;
    for (int id = 0; id < nodes; ++id)
      if (node_fw_link_[id] == static_cast<int>(link)) writes += cnt_[c_rn_fw_ + id];
    rn.lines.push_back(line("RN_WIRE", {{"WRITE", writes}, {"READ", 0}}));
  }
  for (int id = 0; id < nodes; ++id)
    rn.lines.push_back(line("ADDER", {{"ADD_2_1", cnt_[c_add21_ + id]},
                                      {"ADD_3_1", cnt_[c_add31_ + id]},
                                      {"CONFIGURATION", cnt_[c_add_conf_ + id]}}));
  if (acc_) {
    for (int k = 0; k < nodes; ++k)
      rn.lines.push_back(line("RN_WIRE", {{"WRITE", cnt_[c_acc_wire_ + k]}, {"READ", 0}}));
    for (int k = 0; k < nodes; ++k)
      rn.lines.push_back(line("ACCUMULATOR", {{"READ", cnt_[c_acc_rd_ + k]},
                                              {"WRITE", cnt_[c_acc_wr_ + k]},
                                              {"ADD", cnt_[c_acc_add_ + k]}}));
  }
  const GlobalBufferTraffic gb = traffic();
  CounterSection buffer{"GlobalBuffer",
                        {line("GLOBALBUFFER", {{"READ", gb.reads()}, {"WRITE", gb.writes()}})}};
  CounterSection cb{"CollectionBus", {}};
  for (int l = 0; l < lines_; ++l) {
    for (int p = 0; p < bus_ports_; ++p)
      cb.lines.push_back(line(
          "CB_WIRE",
          {{"WRITE", cnt_[c_cb_in_ + static_cast<std::size_t>(l) * bus_ports_ + p]}, {"READ", 0}}));
    cb.lines.push_back(line("CB_WIRE", {{"WRITE", cnt_[c_cb_out_ + l]}, {"READ", 0}}));
  }
  for (CounterSection* s : {&dn, &mn, &rn, &buffer, &cb}) f.sections.push_back(std::move(*s));
  return f;
}

}  // namespace

EngineRun run_magma(const HardwareConfig& hw, const SparseDenseOp& op, const SparseDenseTile& tile,
                    const SparseEngineOptions& options) {
  SparseMachine machine(hw, options);
  return machine.run_magma(op, tile);
}

EngineRun run_sigma(const HardwareConfig& hw, const SparseGemmOp& op,
                    const SparseEngineOptions& options) {
  SparseMachine machine(hw, options);
  return machine.run_sigma(op);
}

}  // namespace telar::sim
