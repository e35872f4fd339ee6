// native_events.hpp's functions, forwarded to libtelar_pfm.so (pfm_module.cpp), which is loaded
// on the first call: commands that name no counters never map libpfm4. Without the module (not
// built, or it does not load: said once) native names are unsupported.
#include "prof/native_events.hpp"

#include "core/module.hpp"
#include "prof/counter_modules.hpp"

namespace telar::prof::native {

namespace {

const PfmModuleTable* pfm() {
  static const PfmModuleTable* table =
      modules::load_table_if_available<PfmModuleTable>("pfm", "native event names are unsupported");
  return table;
}

}  // namespace

bool available() {
  return pfm() && pfm()->available();
}

std::optional<Lookup> lookup(std::string_view name, bool user, bool kernel) {
  return pfm() ? pfm()->lookup(name, user, kernel) : std::nullopt;
}

std::vector<EventInfo> list(bool include_absent) {
  return pfm() ? pfm()->list(include_absent) : std::vector<EventInfo>{};
}

const std::vector<std::string>& suggestion_names() {
  static const std::vector<std::string> names =
      pfm() ? pfm()->suggestion_names() : std::vector<std::string>{};
  return names;
}

std::vector<std::string> unit_mask_names(std::string_view name) {
  return pfm() ? pfm()->unit_mask_names(name) : std::vector<std::string>{};
}

int core_counter_count() {
  return pfm() ? pfm()->core_counter_count() : 0;
}

}  // namespace telar::prof::native
