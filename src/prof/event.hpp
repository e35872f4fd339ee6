#pragma once
// An event as the user named it, resolved to what perf_event_open(2) needs. Most events are one
// kernel counter; a PAPI preset may be a sum or difference of several (its terms).
#include <cstdint>
#include <string>
#include <vector>

namespace telar::prof {

// Where a name was found.
enum class EventSource : std::uint8_t {
  Generic,  // perf's generic names: cycles, task-clock, L1-dcache-load-misses, PERF_COUNT_HW_*
  Raw,      // rNNNN: a raw PMU encoding
  Native,   // a PMU-specific name resolved by libpfm4, e.g. fp_arith_inst_retired.scalar_double
  Papi,     // a PAPI preset such as PAPI_TOT_INS
};

std::string_view event_source_name(EventSource source);

// One perf_event_attr's worth of event selection.
struct EventTerm {
  std::uint32_t type = 0;  // PERF_TYPE_*
  std::uint64_t config = 0, config1 = 0, config2 = 0;
  int sign = +1;  // +1 or -1 (PAPI's DERIVED_SUB)
  // libpfm4 already set the privilege levels (the user may have written :u=1/:k=0 modifiers);
  // the session's domain then does not override them.
  bool domain_from_name = false;
  bool exclude_user = false, exclude_kernel = false;
};

struct ResolvedEvent {
  std::string name;       // as the user wrote it (CSV `event` column)
  std::string canonical;  // identity used by derived metrics: "instructions",
                          // "fp_arith_inst_retired.scalar_double"
  EventSource source = EventSource::Generic;
  std::vector<EventTerm> terms;
  bool software = false;    // a kernel software event: never needs a hardware counter
  std::string unavailable;  // non-empty: known, but cannot be counted here (why)
  std::string description;
};

}  // namespace telar::prof
