#pragma once
// The reduction network of MAERI and the sparse engines: the adder switches of an augmented
// reduction tree (ART, or a FEN with its folding node), their augmented (sibling) links, and
// where each switch sends its results: its parent, the lookup table (the root), memory (a
// collection-bus input or an accumulator) or the FEN's folding node. reduce_tree.hpp compiles
// a configuration; this is the hardware it configures, stepped switch by switch.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/fabric/accumulation_buffer.hpp"
#include "sim/fabric/counters.hpp"
#include "sim/fabric/link.hpp"
#include "sim/reduce_tree.hpp"
#include "sim/ring.hpp"

namespace telar::sim::fabric {

// A switch's outputs of one cycle (a handful of values; reused, never shrunk).
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

struct ReductionNetwork {
  // Per adder switch, everything its cycle touches, together.
  struct Node {
    Link in[2];  // from the left and right child (switch or multiplier)
    Ring<Psum> left, right, fw, fold;
    Psum fold_reg{0, 0};
    int fold_count = 0;
  };
  enum class Out : std::uint8_t { Parent, Lookup, Memory, Fold };

  ReduceTree tree;  // the configuration in force
  int levels = 0;
  bool fen = false;
  std::vector<Node> nodes;
  std::vector<int> fw_link_of;                // per switch: its augmented link, or -1
  std::vector<std::uint8_t> even;             // even position within its level
  std::vector<Link> fw_links;                 // augmented links
  std::vector<std::vector<int>> fold_inputs;  // FEN: up-links read by each switch
  std::vector<Link> up_links;                 // FEN: one per switch
  std::vector<int> memory_link;               // per switch: its bus input, or its accumulator
  std::vector<Out> out;
  std::vector<int> out_index;  // parent child-link index, memory link, or up-link
  std::vector<int> order;      // the switches in the order they run each cycle
  Link lookup_in;              // the root's results, on their way to the controller
  OutBuf out_fw, out_ps;
  std::size_t c_wire = 0, c_fw = 0, c_up = 0, c_add21 = 0, c_add31 = 0, c_conf = 0;

  // The switches over `multipliers` leaves, wired to the collection bus as `wiring` says
  // (through accumulator k in front of the k-th wired switch when `accumulators`).
  void build(ReduceNetwork kind, int multipliers, const BusWiring& wiring, bool accumulators,
             CounterLayout& counters);
  // Puts a compiled configuration in force: where each switch sends its results and the order
  // the switches run in (root first, level by level; a pair joined by an active augmented link
  // runs receiver first).
  void configure(ReduceTree compiled);
  // Counts one configuration of every switch the configuration uses.
  void count_configuration(std::uint64_t* counters) const;

  Link& child_link(int index) { return nodes[index >> 1].in[index & 1]; }
  // The child link a multiplier sends its products on.
  int leaf_link(int multiplier) const {
    return ReduceTree::index(levels - 1, multiplier / 2) * 2 + multiplier % 2;
  }

  // Switch `id`'s cycle. Results for memory go to `memory[memory_link]` (bus inputs or
  // accumulator inputs, whose wires count at `c_memory`); a FEN folding node sums `folds`
  // values. `mixed()` is called (and must not return) when two virtual neurons meet.
  template <typename Mixed>
  [[gnu::always_inline]] void node_cycle(int id, int folds, std::uint64_t* counters, Link* memory,
                                         std::size_t c_memory, Mixed&& mixed);

  // One cycle of the accumulators (if any), then of every switch in order; `folds` partial sums
  // make an output in an accumulator or the FEN's folding node.
  template <typename Mixed>
  [[gnu::always_inline]] void cycle(int folds, std::uint64_t* counters, CollectionBus& bus,
                                    AccumulationBuffer* acc, Mixed&& mixed) {
    if (acc)
      for (int k = 0; k < acc->size(); ++k) acc->cycle(k, folds, counters, bus, mixed);
    Link* memory = acc ? acc->in.data() : bus.in.data();
    const std::size_t c_memory = acc ? acc->c_wire : bus.c_in;
    for (int id : order) node_cycle(id, folds, counters, memory, c_memory, mixed);
  }

  bool idle() const;
  // Everything in flight, without values (the steady-state skipper's view).
  void state(std::vector<std::uint64_t>& out) const;
  // The ReduceNetwork section: child wires, augmented links, FEN up-links, adders, then the
  // accumulators' lines (if any).
  CounterSection section(const std::uint64_t* counters, const AccumulationBuffer* acc) const;
};

template <typename Mixed>
[[gnu::always_inline]] inline void ReductionNetwork::node_cycle(int id, int folds,
                                                                std::uint64_t* counters,
                                                                Link* memory, std::size_t c_memory,
                                                                Mixed&& mixed) {
  const AdderConfig& c = tree.nodes[id];
  Node& nd = nodes[id];
  Link& lin = nd.in[0];
  Link& rin = nd.in[1];
  const int fw = fw_link_of[id];
  const bool receives_fw = c.link == LinkDir::Receive && fw >= 0;
  if (!lin.pending && !rin.pending && nd.left.empty() && nd.right.empty() && nd.fold.empty() &&
      fold_inputs[id].empty() && !(receives_fw && fw_links[fw].pending))
    return;  // idle: nothing to receive, nothing queued
  if (lin.pending) lin.take([&](const Psum& v) { nd.left.push(v); });
  if (rin.pending) rin.take([&](const Psum& v) { nd.right.push(v); });
  if (receives_fw && fw_links[fw].pending) fw_links[fw].take([&](const Psum& v) { nd.fw.push(v); });
  for (int src : fold_inputs[id]) {
    Link& up = up_links[src];
    if (up.pending) up.take([&](const Psum& v) { nd.fold.push(v); });
  }
  out_fw.n = 0;
  out_ps.n = 0;
  Ring<Psum>& L = nd.left;
  Ring<Psum>& Rt = nd.right;
  OutBuf& straight = c.link != LinkDir::None ? out_fw : out_ps;
  switch (c.mode) {
    case AdderMode::Add21:
      if (!L.empty() && Rt.empty() && !c.right_enabled) straight.push(L.pop());
      if (!Rt.empty() && L.empty() && !c.left_enabled) straight.push(Rt.pop());
      if (!L.empty() && !Rt.empty()) {
        Psum a = L.pop();
        const Psum b = Rt.pop();
        if (a.vn != b.vn) [[unlikely]]
          mixed();
        a.value += b.value;
        ++counters[c_add21 + id];
        straight.push(a);
      }
      break;
    case AdderMode::Add31:
      if (!L.empty() && !Rt.empty() && !nd.fw.empty()) {
        Psum a = L.pop();
        const Psum b = Rt.pop(), f = nd.fw.pop();
        if (a.vn != b.vn || a.vn != f.vn) [[unlikely]]
          mixed();
        a.value += b.value;
        a.value += f.value;
        ++counters[c_add31 + id];
        out_ps.push(a);
      }
      break;
    case AdderMode::Add11Fw11:
      if (even[id]) {
        if (!L.empty()) out_fw.push(L.pop());
        if (!Rt.empty()) out_ps.push(Rt.pop());
      } else {
        if (!L.empty()) out_ps.push(L.pop());
        if (!Rt.empty()) out_fw.push(Rt.pop());
      }
      break;
    case AdderMode::Fw22:
      while (!L.empty()) out_ps.push(L.pop());
      while (!Rt.empty()) out_ps.push(Rt.pop());
      break;
    case AdderMode::Fold:
      if (!nd.fold.empty()) {
        const Psum v = nd.fold.pop();
        if (nd.fold_count == 0) {
          nd.fold_reg = v;
        } else {
          if (nd.fold_reg.vn != v.vn) [[unlikely]]
            mixed();
          nd.fold_reg.value += v.value;
          ++counters[c_add21 + id];
        }
        if (nd.fold_count == folds - 1) {
          out_ps.push(nd.fold_reg);
          nd.fold_count = 0;
        } else {
          ++nd.fold_count;
        }
      }
      break;
  }
  if (!out_fw.empty() && fw >= 0) {
    fw_links[fw].send(out_fw.v.data(), out_fw.n);
    ++counters[c_fw + id];
  }
  if (out_ps.empty()) return;
  const int to = out_index[id];
  switch (out[id]) {
    case Out::Memory:
      memory[to].send(out_ps.v.data(), out_ps.n);
      ++counters[c_memory + to];
      break;
    case Out::Fold:
      up_links[to].send(out_ps.v.data(), out_ps.n);
      ++counters[c_up + to];
      break;
    case Out::Lookup:
      lookup_in.send(out_ps.v.data(), out_ps.n);
      break;
    case Out::Parent:
      child_link(to).send(out_ps.v.data(), out_ps.n);
      ++counters[c_wire + to];
      break;
  }
}

}  // namespace telar::sim::fabric
