#pragma once
// perf's generic event names (the ones `perf list` prints as hardware, software and hardware
// cache events), their PERF_COUNT_* spellings, and the reverse map used to give any event with
// a generic encoding (also one found through libpfm4 or PAPI) its canonical name.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace telar::prof {

struct GenericEvent {
  std::string name;                  // canonical perf name: "cycles", "L1-dcache-load-misses"
  std::vector<std::string> aliases;  // other spellings: "cpu-cycles", "PERF_COUNT_HW_CPU_CYCLES"
  std::uint32_t type;                // PERF_TYPE_HARDWARE, _SOFTWARE or _HW_CACHE
  std::uint64_t config;
  std::string description;
};

// Every generic event, hardware first, then software, then cache events.
const std::vector<GenericEvent>& generic_events();

// Case-insensitive lookup by name or alias.
const GenericEvent* find_generic_event(std::string_view name);

// The canonical name of a generic encoding, if it is one.
std::optional<std::string> generic_name_for(std::uint32_t type, std::uint64_t config);

// Parses perf's raw syntax "rNNNN" (hex) into a config value.
std::optional<std::uint64_t> parse_raw_event(std::string_view name);

}  // namespace telar::prof
