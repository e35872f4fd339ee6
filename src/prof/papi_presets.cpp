#include "prof/papi_presets.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "prof/native_events.hpp"

#ifdef TELAR_HAVE_PAPI
#include <papi.h>

#include <cstring>
#include <mutex>
#endif

namespace telar::prof::papi {

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Presets whose meaning is exactly one perf generic event.
constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kGenericEquivalents = {{
    {"PAPI_TOT_INS", "instructions"},
    {"PAPI_TOT_CYC", "cycles"},
    {"PAPI_REF_CYC", "ref-cycles"},
    {"PAPI_BR_INS", "branch-instructions"},
    {"PAPI_BR_MSP", "branch-misses"},
    {"PAPI_L1_ICM", "L1-icache-load-misses"},
    {"PAPI_L1_LDM", "L1-dcache-load-misses"},
    {"PAPI_TLB_DM", "dTLB-load-misses"},
    {"PAPI_TLB_IM", "iTLB-load-misses"},
}};

}  // namespace

bool looks_like_preset(std::string_view name) {
  return name.size() > 5 && upper(name.substr(0, 5)) == "PAPI_";
}

std::optional<std::string> generic_equivalent(std::string_view preset) {
  const std::string u = upper(preset);
  for (const auto& [symbol, generic] : kGenericEquivalents)
    if (u == symbol) return std::string(generic);
  return std::nullopt;
}

#ifdef TELAR_HAVE_PAPI

namespace {

std::mutex& papi_mutex() {
  static std::mutex m;
  return m;
}

// PAPI shares libpfm4 with telar; libpfm4 is initialised first so that its settings are ours.
bool initialise() {
  static bool ok = [] {
    (void)native::available();
    return PAPI_library_init(PAPI_VER_CURRENT) == PAPI_VER_CURRENT;
  }();
  return ok;
}

// Why PAPI has no counters here, from its perf_event component.
std::string why_no_counters() {
  for (int i = 0; i < PAPI_num_components(); ++i) {
    const PAPI_component_info_t* c = PAPI_get_component_info(i);
    if (c && std::strcmp(c->name, "perf_event") == 0 && c->disabled)
      return fmt::format("PAPI's perf_event component is disabled here ({})", c->disabled_reason);
  }
  return "PAPI has no native event for it on this CPU";
}

Preset describe(int code) {
  PAPI_event_info_t info;
  std::memset(&info, 0, sizeof info);
  Preset p;
  if (PAPI_get_event_info(code, &info) != PAPI_OK) return p;
  p.symbol = info.symbol;
  p.description = info.long_descr;
  const std::string derived = info.derived;
  if (info.count == 0) {
    p.unavailable = why_no_counters();
    return p;
  }
  if (derived.empty() || derived == "NOT_DERIVED" || derived == "DERIVED_ADD" ||
      derived == "DERIVED_SUB") {
    for (unsigned i = 0; i < info.count && i < PAPI_MAX_INFO_TERMS; ++i) {
      p.natives.emplace_back(info.name[i]);
      p.signs.push_back(derived == "DERIVED_SUB" && i > 0 ? -1 : +1);
    }
  } else {
    p.unavailable = fmt::format(
        "PAPI derives it with {} ({}), which telar does not combine; list its native events "
        "instead",
        derived, info.postfix);
  }
  return p;
}

}  // namespace

bool built_with_papi() {
  return true;
}

std::optional<Preset> lookup(std::string_view name) {
  if (!looks_like_preset(name) || !initialise()) return std::nullopt;
  std::lock_guard lock(papi_mutex());
  std::string symbol = upper(name);
  int code = 0;
  if (PAPI_event_name_to_code(symbol.data(), &code) != PAPI_OK || !(code & PAPI_PRESET_MASK))
    return std::nullopt;
  return describe(code);
}

std::vector<Preset> list() {
  std::vector<Preset> out;
  if (!initialise()) return out;
  std::lock_guard lock(papi_mutex());
  int code = PAPI_PRESET_MASK;
  if (PAPI_enum_event(&code, PAPI_ENUM_FIRST) != PAPI_OK) return out;
  do {
    Preset p = describe(code);
    if (!p.symbol.empty()) out.push_back(std::move(p));
  } while (PAPI_enum_event(&code, PAPI_ENUM_EVENTS) == PAPI_OK);
  return out;
}

#else  // built without PAPI: only the presets with an exact generic equivalent are known.

bool built_with_papi() {
  return false;
}

std::optional<Preset> lookup(std::string_view name) {
  const auto generic = generic_equivalent(name);
  if (!generic) return std::nullopt;
  Preset p;
  p.symbol = upper(name);
  p.description =
      fmt::format("counted as the perf event {} (telar was built without PAPI)", *generic);
  p.natives.push_back(*generic);
  p.signs.push_back(+1);
  return p;
}

std::vector<Preset> list() {
  std::vector<Preset> out;
  for (const auto& [symbol, generic] : kGenericEquivalents) out.push_back(*lookup(symbol));
  return out;
}

#endif

}  // namespace telar::prof::papi
