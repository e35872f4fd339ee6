#pragma once
// The counter libraries live in modules loaded on first use (core/module.hpp): libtelar_pfm.so
// (libpfm4's native event tables, pfm_module.cpp) and libtelar_papi.so (PAPI's presets,
// papi_module.cpp). These are their tables; the functions behave as native_events.hpp and
// papi_presets.hpp describe.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "prof/native_events.hpp"
#include "prof/papi_presets.hpp"

namespace telar::prof {

struct PfmModuleTable {
  bool (*available)();
  std::optional<native::Lookup> (*lookup)(std::string_view name, bool user, bool kernel);
  std::vector<native::EventInfo> (*list)(bool include_absent);
  std::vector<std::string> (*suggestion_names)();
  std::vector<std::string> (*unit_mask_names)(std::string_view name);
  int (*core_counter_count)();
};

struct PapiModuleTable {
  std::optional<papi::Preset> (*lookup)(std::string_view name);
  std::vector<papi::Preset> (*list)();
};

}  // namespace telar::prof
