#include "prof/event_resolver.hpp"

#include <fmt/format.h>
#include <linux/perf_event.h>

#include <algorithm>
#include <set>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/parse.hpp"
#include "prof/generic_events.hpp"
#include "prof/native_events.hpp"
#include "prof/papi_presets.hpp"

namespace telar::prof {

namespace {
constexpr EnumNames<EventSource, EventSource::Papi> kSourceNames{
    {"generic", "raw", "native", "papi"}};
}

std::string_view event_source_name(EventSource source) {
  return kSourceNames(source);
}

namespace {

ResolvedEvent from_generic(std::string_view name, const GenericEvent& g) {
  ResolvedEvent e;
  e.name = std::string(name);
  e.canonical = g.name;
  e.source = EventSource::Generic;
  e.software = g.type == PERF_TYPE_SOFTWARE;
  e.description = g.description;
  EventTerm t;
  t.type = g.type;
  t.config = g.config;
  e.terms.push_back(t);
  return e;
}

// A native name found by libpfm4 (on this machine's PMUs or on another model's).
ResolvedEvent from_native(std::string_view name, const native::Lookup& found) {
  ResolvedEvent e;
  e.name = std::string(name);
  e.canonical = found.canonical;
  e.source = EventSource::Native;
  e.software = found.term.type == PERF_TYPE_SOFTWARE;
  e.description = found.description;
  e.terms.push_back(found.term);
  if (!found.pmu_present) {
    std::string models;
    for (std::size_t i = 0; i < found.absent_pmus.size() && i < 4; ++i)
      models += (i ? ", " : "") + found.absent_pmus[i];
    if (found.absent_pmus.size() > 4) models += ", ...";
    e.unavailable =
        found.absent_pmus.size() > 1
            ? fmt::format("it is an event of PMU models this machine does not have ({})", models)
            : fmt::format(
                  "it is an event of the PMU '{}' ({}), which this machine "
                  "does not have",
                  found.pmu, found.pmu_description);
  }
  return e;
}

ResolvedEvent from_papi(std::string_view name, const papi::Preset& preset,
                        const ResolveOptions& options) {
  ResolvedEvent e;
  e.name = std::string(name);
  e.canonical = papi::generic_equivalent(preset.symbol).value_or(to_lower(preset.symbol));
  e.source = EventSource::Papi;
  e.description = preset.description;
  e.unavailable = preset.unavailable;
  if (!e.unavailable.empty()) return e;
  bool all_software = true;
  for (std::size_t i = 0; i < preset.natives.size(); ++i) {
    const std::string& native_name = preset.natives[i];
    EventTerm term;
    if (const GenericEvent* g = find_generic_event(native_name)) {
      term.type = g->type;
      term.config = g->config;
    } else if (auto found = native::lookup(native_name, options.user, options.kernel);
               found && found->pmu_present) {
      term = found->term;
    } else {
      e.unavailable =
          fmt::format("PAPI maps it to '{}', which libpfm4 cannot encode here", native_name);
      e.terms.clear();
      return e;
    }
    term.sign = preset.signs[i];
    all_software = all_software && term.type == PERF_TYPE_SOFTWARE;
    e.terms.push_back(term);
  }
  e.software = all_software && !e.terms.empty();
  return e;
}

[[noreturn]] void unknown_event(std::string_view name) {
  const auto near = suggest_event_names(name);
  std::string hint;
  if (!near.empty()) {
    hint = " (did you mean ";
    for (std::size_t i = 0; i < near.size(); ++i)
      hint += fmt::format("{}'{}'", i == 0 ? "" : i + 1 == near.size() ? " or " : ", ", near[i]);
    hint += "?)";
  }
  std::string why;
  if (!native::available())
    why =
        "; libpfm4 is not available (not built in, or its module does not load: see telar "
        "--version --check-modules), so PMU-specific names are not known";
  else if (papi::looks_like_preset(name) && !papi::built_with_papi())
    why = "; telar was built without PAPI, so only presets with a perf equivalent are known";
  fail("unknown event '{}'{}{}; `telar prof list` shows every known event", name, hint, why);
}

}  // namespace

ResolvedEvent resolve_event(std::string_view raw_name, const ResolveOptions& options) {
  const std::string name{trim(raw_name)};
  require(!name.empty(), "empty event name; write one event name per line or comma");
  if (const GenericEvent* g = find_generic_event(name)) return from_generic(name, *g);
  if (auto config = parse_raw_event(name)) {
    ResolvedEvent e;
    e.name = name;
    e.canonical = to_lower(name);
    e.source = EventSource::Raw;
    e.description = "raw PMU encoding";
    EventTerm t;
    t.type = PERF_TYPE_RAW;
    t.config = *config;
    e.terms.push_back(t);
    return e;
  }
  if (papi::looks_like_preset(name)) {
    if (auto preset = papi::lookup(name)) return from_papi(name, *preset, options);
    unknown_event(name);
  }
  if (auto found = native::lookup(name, options.user, options.kernel)) {
    if (found->generic_pmu) {
      // libpfm4's spelling of a generic event (PERF_COUNT_HW_CACHE_L1D.MISS): counted as such.
      ResolvedEvent e = from_native(name, *found);
      e.source = EventSource::Generic;
      return e;
    }
    return from_native(name, *found);
  }
  unknown_event(name);
}

std::vector<ResolvedEvent> resolve_events(const std::vector<std::string>& names,
                                          const ResolveOptions& options) {
  std::vector<ResolvedEvent> out;
  std::set<std::string> seen;
  for (const auto& n : names) {
    const std::string key = to_lower(trim(n));
    require(seen.insert(key).second, "event '{}' is listed twice; list each event once",
            std::string(trim(n)));
    out.push_back(resolve_event(n, options));
  }
  return out;
}

std::vector<std::string> suggest_event_names(std::string_view name) {
  const std::string wanted = to_lower(trim(name));
  std::vector<std::string> out;
  auto add = [&](std::string s) {
    if (!s.empty() && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  // A known event with a misspelt unit mask: suggest among that event's unit masks.
  if (wanted.find_first_of(".:") != std::string::npos) {
    const auto masks = native::unit_mask_names(wanted);
    if (!masks.empty()) {
      std::string dotted = wanted;
      std::replace(dotted.begin(), dotted.end(), ':', '.');
      add(closest_match(dotted, masks));
      return out;
    }
  }
  std::vector<std::string> generic;
  for (const auto& g : generic_events()) {
    generic.push_back(g.name);
    for (const auto& a : g.aliases) generic.push_back(a);
  }
  std::vector<std::string> lowered;
  for (const auto& g : generic) lowered.push_back(to_lower(g));
  const std::string near_generic = closest_match(wanted, lowered);
  if (!near_generic.empty())
    for (std::size_t i = 0; i < lowered.size(); ++i)
      if (lowered[i] == near_generic) add(generic[i]);
  if (papi::looks_like_preset(wanted)) {
    std::vector<std::string> presets;
    for (const auto& p : papi::list()) presets.push_back(p.symbol);
    add(closest_match(to_upper(wanted), presets));
  }
  const std::string event_part = wanted.substr(0, wanted.find_first_of(".:"));
  add(closest_match(event_part, native::suggestion_names()));
  if (out.size() > 3) out.resize(3);
  return out;
}

}  // namespace telar::prof
