#pragma once
// The open counters of a session, on perf_event_open(2). Counters are opened once and run until
// the set is destroyed; read() takes a snapshot of every counter (one read(2) per group) so that
// scopes are differences between snapshots, never start/stop pairs.
//
// Per-thread mode opens one group set per thread the target has right now (so worker pools that
// already exist, such as OpenBLAS's or OpenMP's, are counted) with inherit set (so threads
// started later are counted too). Per-CPU mode opens one group set per listed CPU.
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "prof/counting_options.hpp"
#include "prof/event.hpp"

namespace telar::prof {

struct CounterReading {
  std::uint64_t value = 0;    // raw count
  std::uint64_t enabled = 0;  // ns the counter was enabled
  std::uint64_t running = 0;  // ns it was actually on a hardware counter
};

class CounterSet {
 public:
  // Opens counters for every event not already marked unavailable. Events the kernel cannot
  // count here get `unavailable` set (with the reason) and are skipped; problems the user must
  // fix (permissions, a group that cannot fit without multiplexing, too many open files) throw
  // telar::Error. `domain` must be a concrete domain (not Auto).
  CounterSet(std::vector<ResolvedEvent>& events, const CountingOptions& options, Domain domain);
  ~CounterSet();
  CounterSet(const CounterSet&) = delete;
  CounterSet& operator=(const CounterSet&) = delete;

  // One slot per opened counter (event term × thread or CPU).
  struct Slot {
    int cpu_index;    // index into cpus()
    int event_index;  // index into the events vector given to the constructor
    int sign;         // term sign (PAPI DERIVED_SUB)
    bool first_term;  // its times are the ones reported for the event
  };
  const std::vector<Slot>& slots() const { return slots_; }
  std::size_t size() const { return slots_.size(); }

  // Which side of a scope boundary the time spent waiting inside read() lands on, for the
  // calling thread: reading its own counters first leaves the wait after its reading (use it
  // where a scope ends), last leaves it before (where a scope begins), so the boundary's own cost
  // stays outside the scope either way.
  enum class CallerReads { First, Last };
  // Fills out[0 .. size()) from one read(2) per group; throws telar::Error if a read fails.
  // With CountingOptions::compute_pool and `in_pool`, each compute (OpenMP) thread reads its own
  // groups: for boundaries between kernels (node, batch), where the pool's threads are awake
  // and spinning (a read elsewhere would wake the pool, and its threads would then spin in the
  // enclosing scope).
  void read(CounterReading* out, CallerReads order = CallerReads::First, bool in_pool = false) const;

  // {-1} in per-thread mode (the threads are summed), the CPU numbers in per-CPU mode.
  const std::vector<int>& cpus() const { return cpus_; }
  std::size_t thread_count() const { return threads_; }
  std::size_t group_count() const { return groups_.size(); }

 private:
  struct Group {
    int leader_fd = -1;
    std::size_t first_slot = 0;
    std::size_t size = 0;
    pid_t thread = 0;  // with pool_reads_: the thread of this process it counts
    std::size_t buffer_offset = 0;  // its part of buffer_, so groups can be read concurrently
  };
  // One read(2) of a group into out: 0, the errno of a failed read, or kShortRead. Never
  // throws (it runs inside a parallel region).
  static constexpr int kShortRead = -1, kNotRead = -2;
  int read_group(const Group& g, CounterReading* out) const;
  std::vector<Group> groups_;
  std::vector<int> fds_;
  std::vector<Slot> slots_;
  std::vector<int> cpus_;
  std::size_t threads_ = 0;
  bool pool_reads_ = false;  // CountingOptions::compute_pool in effect
  mutable std::vector<std::uint64_t> buffer_;
  mutable std::vector<int> owner_status_;  // read_group()'s result per group, in read()
};

// Whether this process could count `event` in `domain` right now (opens and closes a counter on
// the calling thread): "" if it can, otherwise why not.
std::string probe_event(const ResolvedEvent& event, Domain domain);

}  // namespace telar::prof
