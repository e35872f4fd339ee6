#include "sim/steady_state.hpp"

#include "core/rng.hpp"

namespace telar::sim {

std::uint64_t state_fingerprint(std::uint64_t seed, const std::vector<std::uint64_t>& words) {
  // Four independent multiply-xor lanes (states are thousands of words), then mixed together.
  std::uint64_t lane[4] = {seed ^ 0xcbf29ce484222325ULL, seed + 0x9e3779b97f4a7c15ULL, ~seed,
                           seed * 0xff51afd7ed558ccdULL};
  const std::size_t n = words.size();
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; ++k) lane[k] = (lane[k] ^ words[i + k]) * 0x100000001b3ULL;
  for (; i < n; ++i) lane[0] = (lane[0] ^ words[i]) * 0x100000001b3ULL;
  std::uint64_t h = telar::mix64(lane[0] ^ n);
  for (int k = 1; k < 4; ++k) h = telar::mix64(h ^ lane[k]);
  return h;
}

}  // namespace telar::sim
