#include "prof/generic_events.hpp"

#include <linux/perf_event.h>

#include <algorithm>
#include <cctype>

namespace telar::prof {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::vector<GenericEvent> build_table() {
  std::vector<GenericEvent> t;
  auto hw = [&](std::string name, std::vector<std::string> aliases, std::uint64_t config,
                std::string description) {
    t.push_back(
        {std::move(name), std::move(aliases), PERF_TYPE_HARDWARE, config, std::move(description)});
  };
  hw("cycles", {"cpu-cycles", "PERF_COUNT_HW_CPU_CYCLES"}, PERF_COUNT_HW_CPU_CYCLES,
     "core clock cycles (unhalted)");
  hw("instructions", {"PERF_COUNT_HW_INSTRUCTIONS"}, PERF_COUNT_HW_INSTRUCTIONS,
     "retired instructions");
  hw("cache-references", {"PERF_COUNT_HW_CACHE_REFERENCES"}, PERF_COUNT_HW_CACHE_REFERENCES,
     "last-level cache accesses");
  hw("cache-misses", {"PERF_COUNT_HW_CACHE_MISSES"}, PERF_COUNT_HW_CACHE_MISSES,
     "last-level cache misses");
  hw("branch-instructions", {"branches", "PERF_COUNT_HW_BRANCH_INSTRUCTIONS"},
     PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "retired branch instructions");
  hw("branch-misses", {"PERF_COUNT_HW_BRANCH_MISSES"}, PERF_COUNT_HW_BRANCH_MISSES,
     "mispredicted branches");
  hw("bus-cycles", {"PERF_COUNT_HW_BUS_CYCLES"}, PERF_COUNT_HW_BUS_CYCLES, "bus cycles");
  hw("stalled-cycles-frontend", {"idle-cycles-frontend", "PERF_COUNT_HW_STALLED_CYCLES_FRONTEND"},
     PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "cycles the front end delivered no work");
  hw("stalled-cycles-backend", {"idle-cycles-backend", "PERF_COUNT_HW_STALLED_CYCLES_BACKEND"},
     PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "cycles the back end made no progress");
  hw("ref-cycles", {"PERF_COUNT_HW_REF_CPU_CYCLES"}, PERF_COUNT_HW_REF_CPU_CYCLES,
     "reference (constant-rate) cycles");

  auto sw = [&](std::string name, std::vector<std::string> aliases, std::uint64_t config,
                std::string description) {
    t.push_back(
        {std::move(name), std::move(aliases), PERF_TYPE_SOFTWARE, config, std::move(description)});
  };
  sw("cpu-clock", {"PERF_COUNT_SW_CPU_CLOCK"}, PERF_COUNT_SW_CPU_CLOCK, "CPU clock (ns)");
  sw("task-clock", {"PERF_COUNT_SW_TASK_CLOCK"}, PERF_COUNT_SW_TASK_CLOCK,
     "time the measured threads ran on a CPU (ns)");
  sw("page-faults", {"faults", "PERF_COUNT_SW_PAGE_FAULTS"}, PERF_COUNT_SW_PAGE_FAULTS,
     "page faults");
  sw("context-switches", {"cs", "PERF_COUNT_SW_CONTEXT_SWITCHES"}, PERF_COUNT_SW_CONTEXT_SWITCHES,
     "context switches (count in the kernel domain)");
  sw("cpu-migrations", {"migrations", "PERF_COUNT_SW_CPU_MIGRATIONS"}, PERF_COUNT_SW_CPU_MIGRATIONS,
     "moves of a thread to another CPU");
  sw("minor-faults", {"PERF_COUNT_SW_PAGE_FAULTS_MIN"}, PERF_COUNT_SW_PAGE_FAULTS_MIN,
     "page faults served without I/O");
  sw("major-faults", {"PERF_COUNT_SW_PAGE_FAULTS_MAJ"}, PERF_COUNT_SW_PAGE_FAULTS_MAJ,
     "page faults that needed I/O");
  sw("alignment-faults", {"PERF_COUNT_SW_ALIGNMENT_FAULTS"}, PERF_COUNT_SW_ALIGNMENT_FAULTS,
     "alignment faults");
  sw("emulation-faults", {"PERF_COUNT_SW_EMULATION_FAULTS"}, PERF_COUNT_SW_EMULATION_FAULTS,
     "emulated instructions");
  sw("dummy", {"PERF_COUNT_SW_DUMMY"}, PERF_COUNT_SW_DUMMY, "counts nothing (placeholder)");
  sw("cgroup-switches", {"PERF_COUNT_SW_CGROUP_SWITCHES"}, PERF_COUNT_SW_CGROUP_SWITCHES,
     "context switches to a task in another cgroup");

  // Hardware cache events: cache × operation × result, named the way perf names them.
  struct Cache {
    const char* name;
    const char* enum_name;
    std::uint64_t id;
  };
  const Cache caches[] = {
      {"L1-dcache", "L1D", PERF_COUNT_HW_CACHE_L1D}, {"L1-icache", "L1I", PERF_COUNT_HW_CACHE_L1I},
      {"LLC", "LL", PERF_COUNT_HW_CACHE_LL},         {"dTLB", "DTLB", PERF_COUNT_HW_CACHE_DTLB},
      {"iTLB", "ITLB", PERF_COUNT_HW_CACHE_ITLB},    {"branch", "BPU", PERF_COUNT_HW_CACHE_BPU},
      {"node", "NODE", PERF_COUNT_HW_CACHE_NODE}};
  struct Op {
    const char* plural;
    const char* singular;
    const char* enum_name;
    std::uint64_t id;
  };
  const Op ops[] = {{"loads", "load", "READ", PERF_COUNT_HW_CACHE_OP_READ},
                    {"stores", "store", "WRITE", PERF_COUNT_HW_CACHE_OP_WRITE},
                    {"prefetches", "prefetch", "PREFETCH", PERF_COUNT_HW_CACHE_OP_PREFETCH}};
  for (const auto& c : caches)
    for (const auto& op : ops)
      for (std::uint64_t result : {std::uint64_t{PERF_COUNT_HW_CACHE_RESULT_ACCESS},
                                   std::uint64_t{PERF_COUNT_HW_CACHE_RESULT_MISS}}) {
        const bool miss = result == PERF_COUNT_HW_CACHE_RESULT_MISS;
        std::string name =
            std::string(c.name) + "-" + (miss ? op.singular : op.plural) + (miss ? "-misses" : "");
        // libpfm4's perf PMU spelling, as the seed's config files used it.
        std::string enum_name = std::string("PERF_COUNT_HW_CACHE_") + c.enum_name + "." +
                                op.enum_name + "." + (miss ? "MISS" : "ACCESS");
        std::vector<std::string> aliases = {enum_name};
        // libpfm4 reads PERF_COUNT_HW_CACHE_L1D.MISS as the READ operation; so does telar
        // without libpfm4.
        if (op.id == PERF_COUNT_HW_CACHE_OP_READ)
          aliases.push_back(std::string("PERF_COUNT_HW_CACHE_") + c.enum_name + "." +
                            (miss ? "MISS" : "ACCESS"));
        t.push_back({name,
                     aliases,
                     PERF_TYPE_HW_CACHE,
                     c.id | (op.id << 8) | (result << 16),
                     std::string(c.name) + " " + op.plural + (miss ? " that missed" : "")});
      }
  return t;
}

}  // namespace

const std::vector<GenericEvent>& generic_events() {
  static const std::vector<GenericEvent> table = build_table();
  return table;
}

const GenericEvent* find_generic_event(std::string_view name) {
  for (const auto& e : generic_events()) {
    if (iequals(e.name, name)) return &e;
    for (const auto& a : e.aliases)
      if (iequals(a, name)) return &e;
  }
  return nullptr;
}

std::optional<std::string> generic_name_for(std::uint32_t type, std::uint64_t config) {
  for (const auto& e : generic_events())
    if (e.type == type && e.config == config) return e.name;
  return std::nullopt;
}

std::optional<std::uint64_t> parse_raw_event(std::string_view name) {
  if (name.size() < 2 || name.size() > 17 || (name[0] != 'r' && name[0] != 'R'))
    return std::nullopt;
  std::uint64_t value = 0;
  for (char ch : name.substr(1)) {
    const int c = std::tolower(static_cast<unsigned char>(ch));
    int digit;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else
      return std::nullopt;
    value = (value << 4) | static_cast<std::uint64_t>(digit);
  }
  return value;
}

}  // namespace telar::prof
