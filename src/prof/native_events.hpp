#pragma once
// PMU-specific ("native") event names through libpfm4, e.g. fp_arith_inst_retired.scalar_double
// or UOPS_ISSUED.ANY. libpfm4 knows the event tables of hundreds of PMU models; only the ones
// present on this machine can be counted, but a name from another model is still recognised
// (and reported as not countable here) rather than rejected as a typo.
// Without libpfm4 at build time every function here reports that native names are unsupported.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "prof/event.hpp"

namespace telar::prof::native {

bool available();  // built with libpfm4 and it initialised

struct Lookup {
  EventTerm term;         // encoding for perf_event_open (valid when pmu_present)
  std::string canonical;  // "fp_arith_inst_retired.scalar_double"
  std::string pmu;        // libpfm4's PMU name: "skx", "perf"
  std::string pmu_description;
  bool pmu_present = false;
  std::vector<std::string> absent_pmus;  // when !pmu_present: every model that has the event
  bool generic_pmu = false;              // libpfm4's own spelling of a perf generic event
  std::string description;
};

// Resolves a name against the PMUs present here, then against every other PMU model libpfm4
// knows. `user`/`kernel` give the default privilege levels.
std::optional<Lookup> lookup(std::string_view name, bool user, bool kernel);

struct EventInfo {
  std::string name;  // "fp_arith_inst_retired.scalar_double" (event.umask, lower case)
  std::string pmu;
  std::string pmu_description;
  bool pmu_present = false;
  std::string description;
};

// Events of the present hardware PMUs (libpfm4's copies of the perf generic events left out);
// with include_absent, the events of every core PMU model libpfm4 knows.
std::vector<EventInfo> list(bool include_absent);

// Event names (without unit masks) of present PMUs and of all core PMU models, for "did you
// mean" suggestions.
const std::vector<std::string>& suggestion_names();

// Unit masks ("event.umask") of the event named by the part of `name` before its first '.' or
// ':', searched on every PMU; empty when that event is unknown.
std::vector<std::string> unit_mask_names(std::string_view name);

// Generic plus fixed counters of this machine's core PMU; 0 when unknown.
int core_counter_count();

}  // namespace telar::prof::native
