// libtelar_pfm.so: PMU-specific event names through libpfm4 (native_events.hpp), built when
// CMake finds libpfm4 (TELAR_HAVE_PFM) and loaded by native_events.cpp on first use.
#include <perfmon/pfmlib_perf_event.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/module_entry.hpp"
#include "core/parse.hpp"
#include "prof/counter_modules.hpp"
#include "prof/generic_events.hpp"

namespace telar::prof::native {

namespace {

// "event" part of "pmu::event.umask:mod=1".
std::string event_part(std::string_view name) {
  if (auto p = name.find("::"); p != std::string_view::npos) name = name.substr(p + 2);
  const auto end = name.find_first_of(".:");
  return to_lower(name.substr(0, end));
}

bool initialise() {
  static bool ok = [] {
    // Lets a name be encoded for a PMU model that is not this machine's, when it is written
    // with that PMU's prefix; this is how a known-but-absent event is told from a typo.
    ::setenv("LIBPFM_ENCODE_INACTIVE", "1", 0);
    return pfm_initialize() == PFM_SUCCESS;
  }();
  return ok;
}

struct PmuInfo {
  pfm_pmu_t id;
  std::string name, description;
  bool present;
  pfm_pmu_type_t type;
  int first_event;
  int counters;
};

const std::vector<PmuInfo>& pmus() {
  static const std::vector<PmuInfo> all = [] {
    std::vector<PmuInfo> out;
    if (!initialise()) return out;
    for (int i = PFM_PMU_NONE; i < PFM_PMU_MAX; ++i) {
      pfm_pmu_info_t info;
      std::memset(&info, 0, sizeof info);
      info.size = sizeof info;
      if (pfm_get_pmu_info(static_cast<pfm_pmu_t>(i), &info) != PFM_SUCCESS || !info.name) continue;
      out.push_back({static_cast<pfm_pmu_t>(i), info.name, info.desc ? info.desc : "",
                     info.is_present != 0, info.type, info.first_event,
                     info.num_cntrs + info.num_fixed_cntrs});
    }
    return out;
  }();
  return all;
}

const PmuInfo* pmu_by_id(pfm_pmu_t id) {
  for (const auto& p : pmus())
    if (p.id == id) return &p;
  return nullptr;
}

// libpfm4's fully qualified string "skx::FP_ARITH_INST_RETIRED:SCALAR_DOUBLE:e=0:u=1" becomes
// "fp_arith_inst_retired.scalar_double": event and unit masks, modifiers left out.
std::string canonical_from_fstr(std::string_view fstr) {
  if (auto p = fstr.find("::"); p != std::string_view::npos) fstr = fstr.substr(p + 2);
  std::string out;
  std::size_t start = 0;
  while (start <= fstr.size()) {
    std::size_t end = fstr.find(':', start);
    if (end == std::string_view::npos) end = fstr.size();
    const auto token = fstr.substr(start, end - start);
    if (!token.empty() && token.find('=') == std::string_view::npos) {
      if (!out.empty()) out += '.';
      out += to_lower(token);
    }
    start = end + 1;
  }
  return out;
}

std::optional<Lookup> encode(const std::string& name, int plm) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  pfm_perf_encode_arg_t arg;
  std::memset(&arg, 0, sizeof arg);
  arg.attr = &attr;
  arg.size = sizeof arg;
  char* fstr = nullptr;
  arg.fstr = &fstr;
  if (pfm_get_os_event_encoding(name.c_str(), plm, PFM_OS_PERF_EVENT_EXT, &arg) != PFM_SUCCESS)
    return std::nullopt;
  Lookup out;
  out.term.type = attr.type;
  out.term.config = attr.config;
  out.term.config1 = attr.config1;
  out.term.config2 = attr.config2;
  out.term.domain_from_name = true;
  out.term.exclude_user = attr.exclude_user;
  out.term.exclude_kernel = attr.exclude_kernel;
  out.canonical = canonical_from_fstr(fstr ? fstr : name);
  std::free(fstr);
  pfm_event_info_t info;
  std::memset(&info, 0, sizeof info);
  info.size = sizeof info;
  if (pfm_get_event_info(arg.idx, PFM_OS_NONE, &info) == PFM_SUCCESS) {
    if (info.desc) out.description = info.desc;
    if (const PmuInfo* p = pmu_by_id(info.pmu)) {
      out.pmu = p->name;
      out.pmu_description = p->description;
      out.pmu_present = p->present;
      out.generic_pmu = p->type == PFM_PMU_TYPE_OS_GENERIC;
    }
  }
  if (out.generic_pmu)
    if (auto g = generic_name_for(out.term.type, out.term.config)) out.canonical = *g;
  return out;
}

std::mutex& pfm_mutex() {
  static std::mutex m;
  return m;
}

// Calls f(pmu, event, info) for every named event of the PMUs `listed(pmu)` accepts (under
// pfm_mutex).
template <typename Listed, typename F>
void for_each_event(Listed listed, F f) {
  for (const auto& p : pmus()) {
    if (!listed(p)) continue;
    for (int e = p.first_event; e != -1; e = pfm_get_event_next(e)) {
      pfm_event_info_t info;
      std::memset(&info, 0, sizeof info);
      info.size = sizeof info;
      if (pfm_get_event_info(e, PFM_OS_NONE, &info) == PFM_SUCCESS && info.name) f(p, e, info);
    }
  }
}

// Calls f(attr) for every named unit mask of event `e`.
template <typename F>
void for_each_unit_mask(int e, const pfm_event_info_t& info, F f) {
  for (int a = 0; a < info.nattrs; ++a) {
    pfm_event_attr_info_t attr;
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    if (pfm_get_event_attr_info(e, a, PFM_OS_NONE, &attr) == PFM_SUCCESS &&
        attr.type == PFM_ATTR_UMASK && attr.name)
      f(attr);
  }
}

// The PMUs whose events telar suggests: those present, and every core PMU model.
bool suggested(const PmuInfo& p) {
  return p.present || p.type == PFM_PMU_TYPE_CORE;
}

void sort_unique(std::vector<std::string>& names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
}

bool pfm_available() {
  return initialise();
}

std::optional<Lookup> pfm_lookup(std::string_view name, bool user, bool kernel) {
  if (!initialise()) return std::nullopt;
  std::lock_guard lock(pfm_mutex());
  const int plm = (user ? PFM_PLM3 : 0) | (kernel ? PFM_PLM0 : 0);
  const std::string text(name);
  if (auto found = encode(text, plm)) return found;
  if (text.find("::") != std::string::npos) return std::nullopt;
  // Not on this machine's PMUs: try every other core PMU model by prefixing its name.
  std::optional<Lookup> first;
  for (const auto& p : pmus()) {
    if (p.present || p.type != PFM_PMU_TYPE_CORE) continue;
    if (auto found = encode(p.name + "::" + text, plm)) {
      if (!first) first = std::move(found);
      first->absent_pmus.push_back(p.name);
    }
  }
  return first;
}

std::vector<EventInfo> pfm_list(bool include_absent) {
  std::vector<EventInfo> out;
  if (!initialise()) return out;
  std::lock_guard lock(pfm_mutex());
  const auto listed = [&](const PmuInfo& p) {
    if (p.type == PFM_PMU_TYPE_OS_GENERIC) return false;  // perf's generic events, listed already
    return p.present || (include_absent && p.type == PFM_PMU_TYPE_CORE);
  };
  for_each_event(listed, [&](const PmuInfo& p, int e, const pfm_event_info_t& info) {
    const std::string event = to_lower(info.name);
    const std::string desc = info.desc ? info.desc : "";
    bool any_umask = false;
    for_each_unit_mask(e, info, [&](const pfm_event_attr_info_t& attr) {
      any_umask = true;
      out.push_back({event + "." + to_lower(attr.name), p.name, p.description, p.present,
                     attr.desc ? attr.desc : desc});
    });
    if (!any_umask) out.push_back({event, p.name, p.description, p.present, desc});
  });
  return out;
}

std::vector<std::string> pfm_suggestion_names() {
  std::vector<std::string> out;
  if (!initialise()) return out;
  std::lock_guard lock(pfm_mutex());
  for_each_event(suggested, [&](const PmuInfo&, int, const pfm_event_info_t& info) {
    out.push_back(to_lower(info.name));
  });
  sort_unique(out);
  return out;
}

std::vector<std::string> pfm_unit_mask_names(std::string_view name) {
  std::vector<std::string> out;
  if (!initialise()) return out;
  const std::string wanted = event_part(name);
  std::lock_guard lock(pfm_mutex());
  for_each_event(suggested, [&](const PmuInfo&, int e, const pfm_event_info_t& info) {
    if (to_lower(info.name) != wanted) return;
    for_each_unit_mask(e, info, [&](const pfm_event_attr_info_t& attr) {
      out.push_back(wanted + "." + to_lower(attr.name));
    });
  });
  sort_unique(out);
  return out;
}

int pfm_core_counter_count() {
  for (const auto& p : pmus())
    if (p.present && p.type == PFM_PMU_TYPE_CORE && p.counters > 0) return p.counters;
  return 0;
}

}  // namespace
}  // namespace telar::prof::native

TELAR_MODULE_ENTRY(telar::prof::PfmModuleTable{
    &telar::prof::native::pfm_available, &telar::prof::native::pfm_lookup,
    &telar::prof::native::pfm_list, &telar::prof::native::pfm_suggestion_names,
    &telar::prof::native::pfm_unit_mask_names, &telar::prof::native::pfm_core_counter_count})
