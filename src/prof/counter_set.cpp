#include "prof/counter_set.hpp"

#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.hpp"
#include "core/threads.hpp"
#include "prof/cpu_list.hpp"
#include "prof/native_events.hpp"
#include "prof/permissions.hpp"

namespace telar::prof {

namespace {

constexpr std::uint64_t kReadFormat =
    PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;

perf_event_attr make_attr(const EventTerm& term, Domain domain, bool inherit) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = term.type;
  attr.config = term.config;
  attr.config1 = term.config1;
  attr.config2 = term.config2;
  attr.read_format = kReadFormat;
  attr.inherit = inherit ? 1 : 0;
  attr.exclude_hv = 1;
  if (term.domain_from_name) {
    attr.exclude_user = term.exclude_user;
    attr.exclude_kernel = term.exclude_kernel;
  } else {
    attr.exclude_user = domain == Domain::Kernel;
    attr.exclude_kernel = domain == Domain::User;
  }
  return attr;
}

// Returns the file descriptor, or -errno.
int open_counter(perf_event_attr& attr, pid_t pid, int cpu, int group_fd) {
  const long fd = ::syscall(SYS_perf_event_open, &attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
  return fd < 0 ? -errno : static_cast<int>(fd);
}

// Why the kernel cannot count an event here, for errors that mean "not on this machine".
std::string unsupported_reason(int err, const ResolvedEvent& event) {
  switch (err) {
    case ENOENT:
      return event.software
                 ? "this kernel does not know that software event"
                 : "the kernel exposes no hardware PMU for it (common in virtual machines)";
    case EOPNOTSUPP:
      return "the PMU cannot count it in this mode";
    case ENODEV:
      return "its PMU is not on this machine";
    case EINVAL:
      return "the kernel rejected its encoding (EINVAL)";
    case E2BIG:
      return "the kernel does not accept its attribute layout";
    case EBUSY:
      return "the PMU is held exclusively by another tool";
    default:
      return std::strerror(err);
  }
}

bool means_unsupported(int err) {
  return err == ENOENT || err == EOPNOTSUPP || err == ENODEV || err == EINVAL || err == E2BIG ||
         err == EBUSY;
}

[[noreturn]] void fatal_open_error(int err, const ResolvedEvent& event,
                                   const CountingOptions& options, Domain domain) {
  if (err == EACCES || err == EPERM) {
    int paranoid = 4;
    try {
      paranoid = read_paranoid(options.permissions);
    } catch (const Error&) {
    }
    fail(
        "cannot open counter '{}': {} (in a container, its seccomp profile may also block "
        "perf_event_open)",
        event.name, permission_advice(options.mode, domain, paranoid));
  }
  if (err == EMFILE || err == ENFILE)
    fail(
        "cannot open counter '{}': too many open files (one per event and thread or CPU); "
        "raise the limit with `ulimit -n` or count fewer events",
        event.name);
  if (err == ENOSYS)
    fail("perf_event_open is not available in this kernel, so no counter can be opened");
  fail("cannot open counter '{}': {}", event.name, std::strerror(err));
}

std::vector<pid_t> threads_of(pid_t pid) {
  std::vector<pid_t> tids;
  const std::string dir = pid == 0 ? "/proc/self/task" : "/proc/" + std::to_string(pid) + "/task";
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* entry = ::readdir(d)) {
      if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
      tids.push_back(static_cast<pid_t>(std::stol(entry->d_name)));
    }
    ::closedir(d);
  }
  std::sort(tids.begin(), tids.end());
  if (tids.empty()) tids.push_back(pid == 0 ? static_cast<pid_t>(::getpid()) : pid);
  return tids;
}

pid_t this_thread_id() {
  thread_local const pid_t id = static_cast<pid_t>(::syscall(SYS_gettid));
  return id;
}

bool is_hardware(const EventTerm& term) {
  return term.type != PERF_TYPE_SOFTWARE && term.type != PERF_TYPE_TRACEPOINT;
}

}  // namespace

CounterSet::CounterSet(std::vector<ResolvedEvent>& events, const CountingOptions& options,
                       Domain domain) {
  require(domain != Domain::Auto, "internal: CounterSet needs a concrete domain");
  const bool per_cpu = options.mode == CountingMode::PerCpu;
  std::vector<pid_t> targets;
  if (per_cpu) {
    cpus_ = options.cpus.empty() ? online_cpus() : options.cpus;
    check_cpus_online(cpus_);
    targets = {-1};
  } else {
    cpus_ = {-1};
    // Another process is counted from before its exec, when it has one thread; this process is
    // counted in every thread it has now, and inherit covers the threads started later. The
    // compute pool is started first so that each of its threads has counters of its own, which
    // it can read itself (see read()).
    pool_reads_ = options.compute_pool && options.target_pid == 0;
    if (pool_reads_) on_each_compute_thread([] {});
    targets = options.target_pid == 0 ? threads_of(0) : std::vector<pid_t>{options.target_pid};
  }

  // 1. Without multiplexing every event of a thread/CPU is one group, which must fit the PMU;
  // checked before anything is opened, from the resolved events alone.
  const int limit =
      options.counter_limit > 0 ? options.counter_limit : native::core_counter_count();
  if (!options.multiplex && limit > 0) {
    int hardware_terms = 0;
    for (const auto& event : events)
      if (event.unavailable.empty())
        for (const auto& term : event.terms) hardware_terms += is_hardware(term);
    if (hardware_terms > limit)
      fail(
          "too many events for one group without multiplexing: {} hardware counters needed, "
          "the PMU has {}; count fewer hardware events or allow multiplexing (leave out "
          "--no-multiplex)",
          hardware_terms, limit);
  }

  // 2. Which events can be counted here at all: open each term once on its own.
  for (auto& event : events) {
    if (!event.unavailable.empty()) continue;
    for (const auto& term : event.terms) {
      perf_event_attr attr = make_attr(term, domain, false);
      attr.disabled = 1;
      const int fd = open_counter(attr, targets.front(), cpus_.front(), -1);
      if (fd >= 0) {
        ::close(fd);
        continue;
      }
      if (!means_unsupported(-fd)) fatal_open_error(-fd, event, options, domain);
      event.unavailable = unsupported_reason(-fd, event);
      break;
    }
  }

  std::vector<std::pair<int, int>> terms;  // (event, term) that will be opened
  for (std::size_t e = 0; e < events.size(); ++e) {
    if (!events[e].unavailable.empty()) continue;
    for (std::size_t t = 0; t < events[e].terms.size(); ++t)
      terms.emplace_back(static_cast<int>(e), static_cast<int>(t));
  }

  // 3. The groups: without multiplexing one per thread/CPU; with it, the software events share
  // one group (they never compete for counters) and each hardware event is its own group, so
  // the kernel can rotate them independently.
  std::vector<std::vector<std::pair<int, int>>> layout;
  if (!options.multiplex) {
    if (!terms.empty()) layout.push_back(terms);
  } else {
    std::vector<std::pair<int, int>> software;
    for (const auto& et : terms)
      if (!is_hardware(events[et.first].terms[et.second])) software.push_back(et);
    if (!software.empty()) layout.push_back(software);
    for (const auto& et : terms)
      if (is_hardware(events[et.first].terms[et.second])) layout.push_back({et});
  }

  try {
    for (pid_t pid : targets) {
      for (std::size_t c = 0; c < cpus_.size(); ++c) {
        const std::size_t groups_before = groups_.size(), slots_before = slots_.size(),
                          fds_before = fds_.size();
        bool target_gone = false;
        for (const auto& group_terms : layout) {
          Group group;
          group.first_slot = slots_.size();
          group.thread = pool_reads_ ? pid : 0;
          for (const auto& [e, t] : group_terms) {
            const EventTerm& term = events[e].terms[t];
            perf_event_attr attr = make_attr(term, domain, !per_cpu);
            const bool leader = group.leader_fd < 0;
            if (leader && options.enable_on_exec) {
              attr.disabled = 1;
              attr.enable_on_exec = 1;
            }
            const int fd = open_counter(attr, pid, cpus_[c], leader ? -1 : group.leader_fd);
            if (fd == -ESRCH) {
              target_gone = true;  // the thread ended while we were opening counters
              break;
            }
            if (fd == -EINVAL && !leader && !options.multiplex)
              fail(
                  "too many events for one group without multiplexing: the PMU cannot hold "
                  "'{}' next to the events before it; count fewer hardware events or allow "
                  "multiplexing (leave out --no-multiplex)",
                  events[e].name);
            if (fd < 0) fatal_open_error(-fd, events[e], options, domain);
            fds_.push_back(fd);
            if (leader) group.leader_fd = fd;
            slots_.push_back({static_cast<int>(c), e, term.sign, t == 0});
            ++group.size;
          }
          if (target_gone) break;
          groups_.push_back(group);
        }
        if (target_gone) {
          for (std::size_t i = fds_before; i < fds_.size(); ++i) ::close(fds_[i]);
          fds_.resize(fds_before);
          slots_.resize(slots_before);
          groups_.resize(groups_before);
        } else if (!per_cpu) {
          ++threads_;
        }
      }
    }
  } catch (...) {
    for (int fd : fds_) ::close(fd);
    throw;
  }
  std::size_t buffer_size = 0;
  for (auto& g : groups_) {
    g.buffer_offset = buffer_size;
    buffer_size += 3 + g.size;
  }
  buffer_.resize(buffer_size);
  owner_status_.resize(groups_.size());
}

std::string probe_event(const ResolvedEvent& event, Domain domain) {
  if (!event.unavailable.empty()) return event.unavailable;
  for (const auto& term : event.terms) {
    perf_event_attr attr = make_attr(term, domain, false);
    attr.disabled = 1;
    const int fd = open_counter(attr, 0, -1, -1);
    if (fd >= 0) {
      ::close(fd);
      continue;
    }
    if (-fd == EACCES || -fd == EPERM)
      return "not permitted here (kernel.perf_event_paranoid or missing CAP_PERFMON)";
    return unsupported_reason(-fd, event);
  }
  return {};
}

CounterSet::~CounterSet() {
  for (int fd : fds_) ::close(fd);
}

int CounterSet::read_group(const Group& g, CounterReading* out) const {
  std::uint64_t* buffer = buffer_.data() + g.buffer_offset;
  const std::size_t bytes = (3 + g.size) * sizeof(std::uint64_t);
  const ssize_t got = ::read(g.leader_fd, buffer, bytes);
  if (got < 0) return errno;
  if (got != static_cast<ssize_t>(bytes)) return kShortRead;
  // Group layout: nr, time_enabled, time_running, value[nr].
  for (std::size_t i = 0; i < g.size; ++i) out[g.first_slot + i] = {buffer[3 + i], buffer[1], buffer[2]};
  return 0;
}

void CounterSet::read(CounterReading* out, CallerReads order, bool in_pool) const {
  const auto check = [](int status) {
    if (status != 0)
      fail("reading counters failed ({}); the measured process may have ended",
           status == kShortRead ? "short read" : std::strerror(status));
  };
  if (!pool_reads_ || !in_pool) {
    for (const auto& g : groups_) check(read_group(g, out));
    return;
  }
  // Reading the counters of a thread that is running on another CPU makes the kernel interrupt
  // that CPU (in a virtual machine, an exit to the hypervisor), and the compute threads spin on
  // their CPUs between kernels. So each compute thread reads its own groups, in one short
  // parallel region, and the calling thread reads the rest afterwards (threads outside the pool,
  // which are mostly asleep). The caller reads its own groups as it enters the region or after
  // the region has ended, as `order` says.
  std::fill(owner_status_.begin(), owner_status_.end(), kNotRead);
  const pid_t caller = this_thread_id();
  on_each_compute_thread([&] {
    const pid_t me = this_thread_id();
    if (me == caller && order == CallerReads::Last) return;
    for (std::size_t i = 0; i < groups_.size(); ++i)
      if (groups_[i].thread == me) owner_status_[i] = read_group(groups_[i], out);
  });
  for (std::size_t i = 0; i < groups_.size(); ++i)
    check(owner_status_[i] == kNotRead ? read_group(groups_[i], out) : owner_status_[i]);
}

}  // namespace telar::prof
