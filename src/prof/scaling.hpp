#pragma once
// Multiplexing: when more events are open than the PMU has counters, the kernel rotates them and
// reports for each how long it was enabled and how long it actually ran. The count over the
// whole enabled time is estimated as raw × time_enabled / time_running.
#include <cstdint>

namespace telar::prof {

// The estimate, rounded to the nearest integer. An event that never ran (running == 0) gives 0:
// there is nothing to scale. running >= enabled (no multiplexing) gives raw exactly.
std::int64_t scale_count(std::uint64_t raw, std::uint64_t time_enabled, std::uint64_t time_running);

// time_running / time_enabled (1 when the event ran the whole time; 1 for an empty interval).
double running_fraction(std::uint64_t time_enabled, std::uint64_t time_running);

}  // namespace telar::prof
