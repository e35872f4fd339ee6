#pragma once
// Turns the names a user writes into events perf_event_open(2) can count. Order of lookup:
// perf generic names (case-insensitive), raw rNNNN, PAPI presets, then libpfm4 native names.
// A name that is known but cannot be counted on this machine (a PMU model this CPU does not
// have, a preset PAPI cannot map here) resolves with `unavailable` set; a name nobody knows is
// an error that suggests the closest known names.
#include <string>
#include <string_view>
#include <vector>

#include "prof/event.hpp"

namespace telar::prof {

struct ResolveOptions {
  bool user = true;  // default privilege levels for native events (modifiers may override)
  bool kernel = true;
};

ResolvedEvent resolve_event(std::string_view name, const ResolveOptions& options = {});

// Resolves each name; a name listed twice is an error.
std::vector<ResolvedEvent> resolve_events(const std::vector<std::string>& names,
                                          const ResolveOptions& options = {});

// Close known names for an unknown one, best first (at most a few).
std::vector<std::string> suggest_event_names(std::string_view name);

}  // namespace telar::prof
