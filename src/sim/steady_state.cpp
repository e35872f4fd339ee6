#include "sim/steady_state.hpp"

#include "core/rng.hpp"

namespace telar::sim {

std::uint64_t state_fingerprint(std::uint64_t seed, const std::vector<std::uint64_t>& words) {
  std::uint64_t h = seed ^ 0xcbf29ce484222325ULL;
  for (std::uint64_t w : words) h = (h ^ w) * 0x100000001b3ULL;
  return telar::mix64(h);
}

}  // namespace telar::sim
