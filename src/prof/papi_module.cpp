// libtelar_papi.so: what PAPI says a preset stands for on this machine (papi_presets.hpp),
// built when CMake finds PAPI (TELAR_HAVE_PAPI) and loaded by papi_presets.cpp on first use.
#include <fmt/format.h>
#include <papi.h>

#include <cstring>
#include <mutex>

#include "core/module_entry.hpp"
#include "core/parse.hpp"
#include "prof/counter_modules.hpp"
#include "prof/native_events.hpp"

namespace telar::prof::papi {

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

std::optional<Preset> papi_lookup(std::string_view name) {
  if (!looks_like_preset(name) || !initialise()) return std::nullopt;
  std::lock_guard lock(papi_mutex());
  std::string symbol = to_upper(name);
  int code = 0;
  if (PAPI_event_name_to_code(symbol.data(), &code) != PAPI_OK || !(code & PAPI_PRESET_MASK))
    return std::nullopt;
  return describe(code);
}

std::vector<Preset> papi_list() {
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

}  // namespace
}  // namespace telar::prof::papi

TELAR_MODULE_ENTRY(telar::prof::PapiModuleTable{&telar::prof::papi::papi_lookup,
                                                &telar::prof::papi::papi_list})
