#pragma once
// Deterministic random numbers: the same seed gives the same stream on every platform
// (xoshiro256** seeded through splitmix64; distributions implemented here, not by the STL).
#include <array>
#include <cstdint>

namespace telar {

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0);
  std::uint64_t next_u64();
  std::uint32_t next_u32() { return static_cast<std::uint32_t>(next_u64() >> 32); }
  double uniform();                               // [0, 1)
  float uniform(float lo, float hi);              // [lo, hi)
  std::uint64_t below(std::uint64_t n);           // uniform integer in [0, n), unbiased
  double normal();                                // standard normal
  float normal(float mean, float stddev);
  // A stream derived from this seed and a label: independent of how much this one was used.
  static Rng derive(std::uint64_t seed, std::uint64_t stream);

  std::array<std::uint64_t, 4> state() const { return s_; }
  void set_state(const std::array<std::uint64_t, 4>& s) { s_ = s; has_spare_ = false; }

 private:
  std::array<std::uint64_t, 4> s_{};
  bool has_spare_ = false;
  double spare_ = 0.0;
};

// Stateless 64-bit mix (splitmix64 finalizer): a hash of an integer, for procedural data.
std::uint64_t mix64(std::uint64_t x);

}  // namespace telar
