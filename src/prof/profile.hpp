#pragma once
// The result of a profiling session: one record per recorded scope (plus one "gap" record per
// parent with children, holding what the parent counted outside them), each with a count per
// (CPU, event). Writers and derived metrics read this; it does not depend on the counters.
#include <cstdint>
#include <string>
#include <vector>

#include "prof/counting_options.hpp"
#include "prof/scope.hpp"

namespace telar::prof {

struct EventColumn {
  std::string name;       // as the user wrote it
  std::string canonical;  // identity for derived metrics
  std::string source;     // "generic", "raw", "native", "papi"
  bool available = true;
  std::string unavailable;  // why not (when !available)
};

struct Count {
  std::int64_t value = 0;         // scaled by time_enabled / time_running (rounded)
  std::int64_t raw = 0;           // unscaled
  std::int64_t time_enabled = 0;  // ns
  std::int64_t time_running = 0;  // ns
};

struct ScopeRecord {
  std::string path;  // "run/epoch[0]/batch[17]/node[conv2].fwd"
  ScopeKind kind = ScopeKind::Run;
  std::int64_t epoch = -1;  // of the enclosing epoch (or this one); -1: none
  std::int64_t batch = -1;
  std::string node;         // "conv2.fwd"
  std::string name;         // region name (kind Region), node name (kind Node)
  std::int64_t index = -1;  // the label's own index
  int parent = -1;          // index of the enclosing recorded scope; -1 at the top
  int depth = 0;
  std::int64_t wall_ns = 0;
  std::vector<Count> counts;  // [cpu_index * events + event_index]
};

struct Profile {
  std::vector<EventColumn> events;
  std::vector<int> cpus{-1};  // -1: all threads of the measured process (per-thread mode)
  CountingMode mode = CountingMode::PerThread;
  Domain domain = Domain::All;
  bool multiplex = true;
  bool was_multiplexed = false;  // some event ran less than it was enabled
  std::size_t threads = 0;       // threads attached when counting began (per-thread mode)
  std::vector<ScopeRecord> records;

  std::size_t event_count() const { return events.size(); }
  const Count& count(const ScopeRecord& r, std::size_t cpu_index, std::size_t event) const {
    return r.counts[cpu_index * events.size() + event];
  }
  // Sum over CPUs of the scaled value.
  std::int64_t total(const ScopeRecord& r, std::size_t event) const;
  // Indexes of available events.
  std::vector<std::size_t> available_events() const;
  // Index of the event with this canonical name, or -1.
  int find_canonical(const std::string& canonical) const;
  // Records of one kind, in order.
  std::vector<const ScopeRecord*> of_kind(ScopeKind kind) const;
  // Children of record i (recorded scopes whose parent is i, gaps included).
  std::vector<std::size_t> children(std::size_t i) const;
};

}  // namespace telar::prof
