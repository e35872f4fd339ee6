#pragma once
// The accumulation buffer: one accumulator in front of each collection-bus input it serves.
// Each cycle accumulator k takes what arrived on its input link into its FIFO and adds one
// value to its register; after `folds` values it sends the sum to its bus input and starts
// again. Its counters: the input wire's writes, and the register's reads, writes and adds.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/fabric/collection_bus.hpp"
#include "sim/fabric/counters.hpp"
#include "sim/fabric/link.hpp"
#include "sim/fabric/state_words.hpp"
#include "sim/ring.hpp"

namespace telar::sim::fabric {

struct AccumulationBuffer {
  std::vector<Link> in;
  std::vector<Ring<Psum>> fifo;
  std::vector<Psum> reg;
  std::vector<int> count;      // values added since the last sum was sent
  std::vector<int> bus_input;  // the collection-bus input link each accumulator feeds
  std::size_t c_wire = 0, c_read = 0, c_write = 0, c_add = 0;

  void build(int accumulators, CounterLayout& counters) {
    const std::size_t n = static_cast<std::size_t>(accumulators);
    in.assign(n, Link{});
    fifo.assign(n, Ring<Psum>{});
    reg.assign(n, Psum{0, 0});
    count.assign(n, 0);
    bus_input.assign(n, 0);
    c_wire = counters.take(n);
    c_read = counters.take(n);
    c_write = counters.take(n);
    c_add = counters.take(n);
  }
  int size() const { return static_cast<int>(in.size()); }

  // Accumulator k's cycle; `mixed()` is called (and must not return) when two virtual neurons
  // meet in its register.
  template <typename Mixed>
  [[gnu::always_inline]] void cycle(int k, int folds, std::uint64_t* counters, CollectionBus& bus,
                                    Mixed&& mixed) {
    Link& link = in[k];
    if (link.pending) link.take([&](const Psum& v) { fifo[k].push(v); });
    if (fifo[k].empty()) return;
    const Psum v = fifo[k].pop();
    if (count[k] == 0) {
      reg[k] = v;
      ++counters[c_write + k];
    } else {
      if (reg[k].vn != v.vn) [[unlikely]]
        mixed();
      reg[k].value += v.value;
      ++counters[c_add + k];
      ++counters[c_read + k];
      ++counters[c_write + k];
    }
    if (count[k] == folds - 1) {
      count[k] = 0;
      bus.in[bus_input[k]].send_one(reg[k]);
      ++counters[bus.c_in + bus_input[k]];
    } else {
      ++count[k];
    }
  }

  bool idle() const {
    for (std::size_t k = 0; k < in.size(); ++k)
      if (in[k].pending || !fifo[k].empty()) return false;
    return true;
  }

  void put_state(std::vector<std::uint64_t>& s) const {
    for (std::size_t k = 0; k < in.size(); ++k) {
      put_link(s, in[k]);
      put_ring(s, fifo[k]);
      s.push_back(static_cast<std::uint64_t>(count[k]));
    }
  }

  // The accumulators' lines of the ReduceNetwork section: their input wires, then the
  // registers.
  void add_lines(CounterSection& rn, const std::uint64_t* counters) const {
    const std::size_t n = in.size();
    reserve_lines(rn, 2 * n);
    add_wires(rn, "RN_WIRE", counters + c_wire, n);
    for (std::size_t k = 0; k < n; ++k)
      rn.lines.push_back(CounterLine{"ACCUMULATOR",
                                     {{"READ", counters[c_read + k]},
                                      {"WRITE", counters[c_write + k]},
                                      {"ADD", counters[c_add + k]}}});
  }
};

}  // namespace telar::sim::fabric
