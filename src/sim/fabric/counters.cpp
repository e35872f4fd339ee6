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

CounterSection global_buffer_section(const GlobalBufferTraffic& gb) {
  return CounterSection{"GlobalBuffer",
                        {CounterLine{"GLOBALBUFFER", {{"READ", gb.reads()}, {"WRITE", gb.writes()}}}}};
}

CounterSection collection_bus_section(int lines, int ports, const std::uint64_t* in,
                                      const std::uint64_t* out) {
  CounterSection cb{"CollectionBus", {}};
  reserve_lines(cb, static_cast<std::size_t>(lines) * (ports + 1));
  for (int l = 0; l < lines; ++l) {
    add_wires(cb, "CB_WIRE", in + static_cast<std::size_t>(l) * ports, static_cast<std::size_t>(ports));
    add_wires(cb, "CB_WIRE", out + l, 1);
  }
  return cb;
}

CountersFile assemble_counters(std::uint64_t cycles, CounterSection dn, CounterSection mn,
                               CounterSection rn, const GlobalBufferTraffic& gb, CounterSection cb) {
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
