#include "sim/glibc_random.hpp"

namespace telar::sim {

GlibcRandom::GlibcRandom(std::uint32_t seed) {
  // The state table: r[0] = seed (0 is replaced by 1, as srand does), then the minimal standard
  // generator r[i] = 16807 r[i-1] mod (2^31 - 1) computed with signed 32-bit arithmetic and the
  // negative results folded back, for i < 31; r[31..33] copy r[0..2]. The 310 outputs after
  // that are discarded before rand() returns its first value.
  std::array<std::int32_t, 344> r{};
  r[0] = static_cast<std::int32_t>(seed == 0 ? 1 : seed);
  for (int i = 1; i < 31; ++i) {
    const std::int64_t hi = r[i - 1] / 127773, lo = r[i - 1] % 127773;
    std::int64_t word = 16807 * lo - 2836 * hi;
    if (word < 0) word += 2147483647;
    r[i] = static_cast<std::int32_t>(word);
  }
  for (int i = 31; i < 34; ++i) r[i] = r[i - 31];
  std::array<std::uint32_t, 344> u{};
  for (int i = 0; i < 34; ++i) u[i] = static_cast<std::uint32_t>(r[i]);
  for (int i = 34; i < 344; ++i) u[i] = u[i - 31] + u[i - 3];
  // Keep the last 34 states; position pos_ holds the oldest.
  for (int i = 0; i < 34; ++i) ring_[i] = u[310 + i];
  pos_ = 0;
}

std::int32_t GlibcRandom::next() {
  // ring_[pos_] is r[i-34]; r[i-31] is three further on and r[i-3] thirty-one further on.
  const std::uint32_t value = ring_[(pos_ + 3) % 34] + ring_[(pos_ + 31) % 34];
  ring_[pos_] = value;
  pos_ = (pos_ + 1) % 34;
  return static_cast<std::int32_t>(value >> 1);
}

}  // namespace telar::sim
