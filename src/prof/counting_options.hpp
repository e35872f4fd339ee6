#pragma once
// How counters are opened: whose work is counted (this process's threads, another process, or
// everything on a list of CPUs), in which privilege domain, and whether the kernel may
// multiplex more events than the PMU has counters.
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace telar::prof {

enum class CountingMode {
  PerThread,  // the measured process: every thread it has now and every thread it starts later
  PerCpu,     // system-wide on each listed CPU, whatever runs there (perf: pid=-1, cpu=N)
};

enum class Domain {
  Auto,  // user and kernel where perf_event_paranoid allows it, otherwise user only
  User,
  Kernel,
  All,  // user and kernel
};

std::string_view mode_name(CountingMode mode);  // "per-thread", "per-cpu"
std::string_view domain_name(Domain domain);    // "auto", "user", "kernel", "all"
Domain parse_domain(std::string_view text, std::string_view what = "--domain");

// Where the permission checks look; tests point them at their own files.
struct PermissionProbe {
  std::filesystem::path paranoid_file = "/proc/sys/kernel/perf_event_paranoid";
  // Whether this process has CAP_PERFMON or CAP_SYS_ADMIN (which bypass the paranoid setting);
  // unset: read from /proc/self/status.
  std::optional<bool> privileged;
};

struct CountingOptions {
  CountingMode mode = CountingMode::PerThread;
  std::vector<int> cpus;  // PerCpu: the CPUs to count on (empty: all online CPUs)
  Domain domain = Domain::Auto;
  bool multiplex = true;        // false: all events of a thread/CPU form one group
  int counter_limit = 0;        // hardware counters per group; 0: ask libpfm4 (or the kernel)
  pid_t target_pid = 0;         // PerThread: 0 = this process, else that process (and children)
  bool enable_on_exec = false;  // start counting when the target calls exec (telar prof run)
  // PerThread, this process: the work runs on telar's compute threads (the OpenMP pool, which
  // oneDNN uses too). The pool is started before the counters are opened, and at every read
  // each of its threads reads its own counters instead of the caller reading them from another
  // CPU (which interrupts that CPU). Leave it off for work that does not use the pool: it would
  // wake the pool, whose idle threads then spin for a while, at every read.
  bool compute_pool = false;
  PermissionProbe permissions;
};

}  // namespace telar::prof
