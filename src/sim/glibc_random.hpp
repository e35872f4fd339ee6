#pragma once
// The C library's rand() as glibc implements it (the TYPE_3 additive feedback generator of
// random(3): r[i] = r[i-3] + r[i-31] mod 2^32 over a Park-Miller seeded table, outputs r >> 1).
// STONNE's command-line driver draws its sparsity patterns and values with rand() and never
// seeds it, so srand(1); reproducing the generator reproduces its matrices exactly.
#include <array>
#include <cstdint>

namespace telar::sim {

class GlibcRandom {
 public:
  explicit GlibcRandom(std::uint32_t seed = 1);
  // The next value of rand(): 0 .. 2^31-1.
  std::int32_t next();

 private:
  std::array<std::uint32_t, 34> ring_{};  // the last 34 states (31 would do; 34 keeps it simple)
  unsigned pos_ = 0;
};

}  // namespace telar::sim
