#include "sim/fabric/distribution_tree.hpp"

#include "sim/fabric/link.hpp"

namespace telar::sim::fabric {

void DistributionTree::build(int port_count, int leaves, CounterLayout& counters) {
  ports = port_count;
  per_port = leaves / ports;
  levels = log2_of(per_port);
  const std::size_t n = static_cast<std::size_t>(ports) * switches();
  c_top = counters.take(static_cast<std::size_t>(ports));
  c_wire = counters.take(2 * n);
  c_unicast = counters.take(n);
  c_broadcast = counters.take(n);
}

void DistributionTree::count_route(int port, const int* dests, std::uint32_t count,
                                   std::uint64_t times, std::uint64_t* counters) const {
  // A switch routes left and/or right where a destination lies below it.
  const int base = port * per_port;
  const std::size_t first_switch = static_cast<std::size_t>(port) * switches();
  struct Frame {
    int level, j;
    std::uint32_t lo, hi;  // destination index range
  };
  Frame stack[64];
  int top = 0;
  stack[top++] = {0, 0, 0, count};
  while (top) {
    const Frame f = stack[--top];
    const int span = per_port >> f.level;
    const int mid = base + f.j * span + span / 2;
    std::uint32_t split = f.lo;
    while (split < f.hi && dests[split] < mid) ++split;
    const bool left = split > f.lo, right = f.hi > split;
    const std::size_t sw = first_switch + static_cast<std::size_t>((1 << f.level) - 1 + f.j);
    counters[(left && right ? c_broadcast : c_unicast) + sw] += times;
    const std::size_t wire = c_wire + 2 * sw;
    if (left) {
      counters[wire] += times;
      if (f.level + 1 < levels) stack[top++] = {f.level + 1, 2 * f.j, f.lo, split};
    }
    if (right) {
      counters[wire + 1] += times;
      if (f.level + 1 < levels) stack[top++] = {f.level + 1, 2 * f.j + 1, split, f.hi};
    }
  }
}

CounterSection DistributionTree::section(const std::uint64_t* top,
                                         const std::uint64_t* routes) const {
  CounterSection dn{"DSNetwork", {}};
  const std::size_t n = static_cast<std::size_t>(switches());
  reserve_lines(dn, static_cast<std::size_t>(ports) * (1 + 3 * n));
  add_wires(dn, "DN_WIRE", top + c_top, static_cast<std::size_t>(ports));
  for (int p = 0; p < ports; ++p) {
    const std::size_t first = static_cast<std::size_t>(p) * n;
    add_wires(dn, "DN_WIRE", routes + c_wire + 2 * first, 2 * n);
    for (std::size_t s = first; s < first + n; ++s)
      dn.lines.push_back(CounterLine{"SWITCH",
                                     {{"ROUTE_UNICAST", routes[c_unicast + s]},
                                      {"ROUTE_BROADCAST", routes[c_broadcast + s]}}});
  }
  return dn;
}

}  // namespace telar::sim::fabric
