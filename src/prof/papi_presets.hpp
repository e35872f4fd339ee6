#pragma once
// PAPI preset names (PAPI_TOT_INS, PAPI_TOT_CYC, ...). When telar is built with PAPI, PAPI says
// which native events a preset stands for on this machine (and whether it has any); telar then
// counts those natives through perf_event_open like any other event, so presets nest in scopes
// and inherit into threads the same way. Without PAPI, the presets that have an exact perf
// generic equivalent are counted as that event.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace telar::prof::papi {

bool built_with_papi();

bool looks_like_preset(std::string_view name);  // PAPI_...

struct Preset {
  std::string symbol;  // PAPI_TOT_INS
  std::string description;
  // The natives it adds up (sign +1) or subtracts (sign -1), in PAPI's spelling; empty when PAPI
  // has no mapping for this machine.
  std::vector<std::string> natives;
  std::vector<int> signs;
  std::string unavailable;  // why it cannot be counted here (empty if it can)
};

// nullopt: not a preset PAPI knows (or built without PAPI).
std::optional<Preset> lookup(std::string_view name);

// Every preset PAPI knows, with what lookup() says about it.
std::vector<Preset> list();

// The perf generic event a preset means exactly (PAPI_TOT_INS -> "instructions"), if any.
std::optional<std::string> generic_equivalent(std::string_view preset);

}  // namespace telar::prof::papi
