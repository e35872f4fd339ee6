#include "prof/scaling.hpp"

#include <limits>

namespace telar::prof {

std::int64_t scale_count(std::uint64_t raw, std::uint64_t time_enabled,
                         std::uint64_t time_running) {
  if (time_running == 0) return 0;
  if (time_running >= time_enabled) {
    return raw > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
               ? std::numeric_limits<std::int64_t>::max()
               : static_cast<std::int64_t>(raw);
  }
  // 128-bit product: a 48-bit count times nanoseconds of enabled time overflows 64 bits.
  using u128 = unsigned __int128;
  const u128 scaled = (static_cast<u128>(raw) * time_enabled + time_running / 2) / time_running;
  const u128 max = static_cast<u128>(std::numeric_limits<std::int64_t>::max());
  return static_cast<std::int64_t>(scaled > max ? max : scaled);
}

double running_fraction(std::uint64_t time_enabled, std::uint64_t time_running) {
  if (time_enabled == 0) return 1.0;
  return static_cast<double>(time_running) / static_cast<double>(time_enabled);
}

}  // namespace telar::prof
