// telar prof list: every event telar knows and whether this machine can count it.
#include <fmt/format.h>

#include <iostream>

#include "cli/prof_options.hpp"
#include "prof/event_catalog.hpp"
#include "prof/native_events.hpp"
#include "prof/papi_presets.hpp"
#include "prof/permissions.hpp"

namespace telar::cli {

int run_prof_list(const Args& args) {
  CLI::App app{
      "List every known event (perf generic names, PAPI presets, the native events of "
      "this machine's PMUs) and whether it can be counted here.",
      "prof list"};
  bool all = false, countable_only = false, json = false;
  app.add_flag("--all", all, "also list the native events of every PMU model libpfm4 knows");
  app.add_flag("--countable", countable_only, "only the events that can be counted here");
  app.add_flag("--json", json, "print the list as one JSON object on the last line");
  int code = 0;
  if (!parse(app, args, "prof list", &code)) return code;

  prof::CatalogOptions options;
  options.all_pmus = all;
  options.domain = prof::effective_domain(prof::CountingMode::PerThread, prof::Domain::Auto, {});
  const auto catalog = prof::event_catalog(options);
  std::size_t countable = 0;
  nlohmann::json list = nlohmann::json::array();
  std::cout << fmt::format("{:<44} {:<18} {}\n", "event", "kind", "countable here");
  for (const auto& e : catalog) {
    countable += e.countable;
    if (countable_only && !e.countable) continue;
    std::cout << fmt::format("{:<44} {:<18} {}\n", e.name, e.kind,
                             e.countable ? "yes" : "no: " + e.reason);
    list.push_back({{"name", e.name},
                    {"kind", e.kind},
                    {"countable", e.countable},
                    {"reason", e.reason},
                    {"description", e.description}});
  }
  std::cout << fmt::format(
      "\n{} events known, {} countable here (domain {}); native names {}, PAPI presets {}.{}\n",
      catalog.size(), countable, prof::domain_name(options.domain),
      prof::native::available() ? "through libpfm4" : "unavailable (built without libpfm4)",
      prof::papi::built_with_papi() ? "through PAPI" : "mapped to perf events (built without PAPI)",
      all ? "" : " --all adds the events of PMU models this machine does not have.");
  if (json) print_json({{"events", list}, {"known", catalog.size()}, {"countable", countable}});
  return 0;
}

}  // namespace telar::cli
