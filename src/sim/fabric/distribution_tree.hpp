#pragma once
// The distribution network: `ports` read ports, each the root of a binary tree of switches over
// its `per_port` multipliers (no switch where a port feeds a single multiplier). Its counters:
// per port, the packets sent on its top wire; per switch, its unicast and broadcast routings
// and the writes on its two output wires.
#include <cstddef>
#include <cstdint>

#include "sim/fabric/counters.hpp"

namespace telar::sim::fabric {

struct DistributionTree {
  int ports = 0, per_port = 1, levels = 0;
  std::size_t c_top = 0, c_wire = 0, c_unicast = 0, c_broadcast = 0;

  // `ports` read ports over `leaves` multipliers (or mesh edges); takes its counter ranges.
  void build(int port_count, int leaves, CounterLayout& counters);
  bool has_switches() const { return per_port > 1; }
  int switches() const { return per_port - 1; }

  // Adds `times` routings of one packet from `port` to its destinations (ascending) to the
  // switch and wire counters of `counters`.
  void count_route(int port, const int* dests, std::uint32_t count, std::uint64_t times,
                   std::uint64_t* counters) const;

  // The DSNetwork section: top wires from `top`, switches and their wires from `routes`
  // (arrays indexed like the engine's counters).
  CounterSection section(const std::uint64_t* top, const std::uint64_t* routes) const;
};

}  // namespace telar::sim::fabric
