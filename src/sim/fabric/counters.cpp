#include "sim/fabric/counters.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace telar::sim::fabric {

void reserve_lines(CounterSection& section, std::size_t n) {
  std::vector<CounterLine>& lines = section.lines;
  if (lines.capacity() < lines.size() + n)
    lines.reserve(std::max(lines.size() + n, 2 * lines.capacity()));
}

void add_wires(CounterSection& section, const char* name, const std::uint64_t* writes,
               std::size_t n) {
  reserve_lines(section, n);
  for (std::size_t i = 0; i < n; ++i)
    section.lines.push_back(CounterLine{name, {{"WRITE", writes[i]}, {"READ", 0}}});
}

void LinearArrayCounters::build(int n, CounterLayout& counters) {
  multipliers = n;
  c_wire = counters.take(static_cast<std::size_t>(n - 1));
  c_mult = counters.take(static_cast<std::size_t>(n));
  c_fwd_psum = counters.take(static_cast<std::size_t>(n));
  c_conf = counters.take(static_cast<std::size_t>(n));
}

CounterSection LinearArrayCounters::section(const std::uint64_t* counters) const {
  CounterSection mn{"MSNetwork", {}};
  const std::size_t n = static_cast<std::size_t>(multipliers);
  reserve_lines(mn, 2 * n);
  add_wires(mn, "MN_WIRE", counters + c_wire, n - 1);
  for (std::size_t i = 0; i < n; ++i)
    mn.lines.push_back(CounterLine{"MULTIPLIER",
                                   {{"MULTIPLICATION", counters[c_mult + i]},
                                    {"FORWARD_PSUM", counters[c_fwd_psum + i]},
                                    {"CONFIGURATION", counters[c_conf + i]}}});
  return mn;
}

CounterSection global_buffer_section(const GlobalBufferTraffic& gb) {
  return CounterSection{
      "GlobalBuffer",
      {CounterLine{"GLOBALBUFFER", {{"READ", gb.reads()}, {"WRITE", gb.writes()}}}}};
}

CountersFile assemble_counters(std::uint64_t cycles, CounterSection dn, CounterSection mn,
                               CounterSection rn, const GlobalBufferTraffic& gb,
                               CounterSection cb) {
  CountersFile f;
  f.cycles = cycles;
  f.sections.reserve(5);
  f.sections.push_back(std::move(dn));
  f.sections.push_back(std::move(mn));
  f.sections.push_back(std::move(rn));
  f.sections.push_back(global_buffer_section(gb));
  f.sections.push_back(std::move(cb));
  return f;
}

}  // namespace telar::sim::fabric
