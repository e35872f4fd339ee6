#pragma once
// The activity counters of a simulated fabric: each engine keeps them in one flat array (a
// `CounterLayout` hands out the ranges) and writes them as STONNE's `.counters` sections with
// the line writers here, so every engine's file has the same lines for the same hardware.
#include <cstddef>
#include <cstdint>

#include "sim/stats.hpp"

namespace telar::sim::fabric {

// Ranges of a flat counter array, handed out in order.
class CounterLayout {
 public:
  std::size_t take(std::size_t n) {
    const std::size_t at = size_;
    size_ += n;
    return at;
  }
  std::size_t size() const { return size_; }

 private:
  std::size_t size_ = 0;
};

// Room for `n` more lines (growing geometrically: sections are built from many appends).
void reserve_lines(CounterSection& section, std::size_t n);

// Appends `n` wires (component `name`, e.g. RN_WIRE: WRITE=writes[i] READ=0).
void add_wires(CounterSection& section, const char* name, const std::uint64_t* writes,
               std::size_t n);

// The counters of a LINEAR multiplier array: the forwarding wires between neighbours, and
// each multiplier's multiplications, forwarded partial sums and configurations.
struct LinearArrayCounters {
  int multipliers = 0;
  std::size_t c_wire = 0, c_mult = 0, c_fwd_psum = 0, c_conf = 0;
  void build(int n, CounterLayout& counters);
  CounterSection section(const std::uint64_t* counters) const;  // MSNetwork
};

// The GlobalBuffer section: one GLOBALBUFFER line.
CounterSection global_buffer_section(const GlobalBufferTraffic& gb);

// A `.counters` file: the cycles and the five sections in STONNE's order.
CountersFile assemble_counters(std::uint64_t cycles, CounterSection dn, CounterSection mn,
                               CounterSection rn, const GlobalBufferTraffic& gb, CounterSection cb);

}  // namespace telar::sim::fabric
