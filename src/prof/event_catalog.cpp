#include "prof/event_catalog.hpp"

#include <fmt/format.h>
#include <linux/perf_event.h>

#include "prof/counter_set.hpp"
#include "prof/event_resolver.hpp"
#include "prof/generic_events.hpp"
#include "prof/native_events.hpp"
#include "prof/papi_presets.hpp"

namespace telar::prof {

std::vector<CatalogEntry> event_catalog(const CatalogOptions& options) {
  std::vector<CatalogEntry> out;
  const ResolveOptions resolve{options.domain != Domain::Kernel, options.domain != Domain::User};
  auto add_probed = [&](const std::string& name, std::string kind, const ResolvedEvent& event) {
    const std::string why = probe_event(event, options.domain);
    out.push_back({name, std::move(kind), why.empty(), why, event.description});
  };

  for (const auto& g : generic_events()) {
    const char* kind = g.type == PERF_TYPE_HARDWARE   ? "hardware"
                       : g.type == PERF_TYPE_SOFTWARE ? "software"
                                                      : "cache";
    add_probed(g.name, kind, resolve_event(g.name, resolve));
  }

  for (const auto& preset : papi::list()) {
    ResolvedEvent event;
    try {
      event = resolve_event(preset.symbol, resolve);
    } catch (const std::exception& e) {
      out.push_back({preset.symbol, "papi", false, e.what(), preset.description});
      continue;
    }
    add_probed(preset.symbol, "papi", event);
  }

  for (const auto& n : native::list(options.all_pmus)) {
    const std::string kind = fmt::format("native ({})", n.pmu);
    if (!n.pmu_present) {
      out.push_back({n.name, kind, false,
                     fmt::format("needs the PMU '{}' ({}), which this machine does not have", n.pmu,
                                 n.pmu_description),
                     n.description});
      continue;
    }
    ResolvedEvent event;
    try {
      event = resolve_event(n.pmu + "::" + n.name, resolve);
    } catch (const std::exception& e) {
      out.push_back({n.name, kind, false, e.what(), n.description});
      continue;
    }
    add_probed(n.name, kind, event);
  }
  return out;
}

}  // namespace telar::prof
