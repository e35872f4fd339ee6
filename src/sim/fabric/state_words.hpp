#pragma once
// The words a fabric's pieces add to a steady-state description (steady_state.hpp): what is
// in flight, by virtual neuron, without data values.
#include <cstdint>
#include <vector>

#include "sim/fabric/link.hpp"
#include "sim/ring.hpp"

namespace telar::sim::fabric {

inline void put_link(std::vector<std::uint64_t>& s, const Link& l) {
  s.push_back(l.pending ? l.size() + 1 : 0);
  if (l.pending)
    for (std::size_t i = 0; i < l.size(); ++i)
      s.push_back(static_cast<std::uint64_t>(l.item(i).vn));
}

inline void put_ring(std::vector<std::uint64_t>& s, const Ring<Psum>& r) {
  s.push_back(r.size());
  for (std::size_t k = 0; k < r.size(); ++k) s.push_back(static_cast<std::uint64_t>(r.at(k).vn));
}

}  // namespace telar::sim::fabric
