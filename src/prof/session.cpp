#include "prof/session.hpp"

#include <atomic>
#include <exception>
#include <map>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "prof/event_resolver.hpp"
#include "prof/permissions.hpp"
#include "prof/scaling.hpp"

namespace telar::prof {

namespace {

std::atomic<Session*> g_current{nullptr};

// One notice per kind of problem, naming the events it affects (a file of ten FP events on a
// machine without them gives one line, not ten).
void report_unavailable(const std::vector<ResolvedEvent>& events) {
  struct Group {
    std::string names, reason;
  };
  std::map<std::string, Group> groups;
  for (const auto& e : events) {
    if (e.unavailable.empty()) continue;
    std::string key = e.name;
    std::string reason = e.unavailable;
    if (e.unavailable.find("no hardware PMU") != std::string::npos) {
      key = "no-pmu";
      reason =
          "hardware counters are not available on this machine (the kernel exposes no CPU "
          "PMU; common in virtual machines); software events and wall time are still "
          "counted";
    } else if (e.unavailable.rfind("it is an event of", 0) == 0) {
      key = "absent-pmu";
      reason = e.unavailable.find("PMU models") != std::string::npos
                   ? "they are events of other CPU models, not of this machine's PMU (" +
                         e.unavailable.substr(e.unavailable.find('(') + 1)
                   : e.unavailable;
    } else if (e.unavailable.rfind("PAPI", 0) == 0) {
      key = "papi";
    }
    Group& g = groups[key];
    g.names += (g.names.empty() ? "" : ", ") + e.name;
    if (g.reason.empty()) g.reason = reason;
  }
  for (const auto& [key, g] : groups)
    log::notice_once(("prof.unavailable." + key + "." + g.names).c_str(),
                     fmt::format("not counting {}: {}", g.names, g.reason));
}

// Software events that the kernel accepts but that would only ever read 0 in this mode or
// domain: reported as not counted rather than written out as misleading zeros.
void mark_meaningless_events(std::vector<ResolvedEvent>& events, CountingMode mode, Domain domain) {
  for (auto& e : events) {
    if (!e.unavailable.empty()) continue;
    if (mode == CountingMode::PerCpu && e.canonical == "task-clock")
      e.unavailable =
          "task-clock measures a task's time and stays 0 in per-CPU mode; use cpu-clock";
    if (domain == Domain::User &&
        (e.canonical == "context-switches" || e.canonical == "cpu-migrations" ||
         e.canonical == "cgroup-switches"))
      e.unavailable = fmt::format(
          "{} happen in the kernel and count nothing with --domain user; "
          "use --domain all",
          e.canonical);
  }
}

}  // namespace

Session::Session(SessionOptions options) : options_(std::move(options)) {
  require(!options_.events.empty(), "no events to count; name at least one (e.g. task-clock)");
  const auto& counting = options_.counting;
  domain_ = effective_domain(counting.mode, counting.domain, counting.permissions);
  check_permission(counting.mode, domain_, counting.permissions);
  if (counting.domain == Domain::Auto && domain_ == Domain::User)
    log::notice_once("prof.user-only",
                     "counting user code only: kernel.perf_event_paranoid is above 1 (set it to 1 "
                     "to include kernel code, or pass --domain user to silence this)");
  ResolveOptions resolve;
  resolve.user = domain_ != Domain::Kernel;
  resolve.kernel = domain_ != Domain::User;
  events_ = resolve_events(options_.events, resolve);
  mark_meaningless_events(events_, counting.mode, domain_);
  counters_ = std::make_unique<CounterSet>(events_, counting, domain_);
  report_unavailable(events_);

  profile_.cpus = counters_->cpus();
  profile_.mode = counting.mode;
  profile_.domain = domain_;
  profile_.multiplex = counting.multiplex;
  profile_.threads = counters_->thread_count();
  for (const auto& e : events_)
    profile_.events.push_back(
        {e.name, e.canonical, std::string(event_source_name(e.source)), e.unavailable.empty(),
         e.unavailable});
  now_.resize(counters_->size());
  // The first boundaries should cost what later ones do: buffers for a few nesting levels are
  // made now, and one read warms the code paths (lazy symbol binding, the kernel's read path).
  constexpr std::size_t kExpectedDepth = 8;
  stack_.resize(kExpectedDepth);
  for (auto& open : stack_) {
    open.start.resize(counters_->size());
    open.children_sum.resize(profile_.cpus.size() * events_.size());
  }
  profile_.records.reserve(1024);
  read_counters_once();
}

Session::~Session() {
  Session* self = this;
  g_current.compare_exchange_strong(self, nullptr);
}

Session* Session::current() {
  return g_current.load();
}
void Session::make_current() {
  g_current.store(this);
}

void Session::snapshot(std::vector<CounterReading>& into, std::int64_t& wall,
                       CounterSet::CallerReads order, ScopeKind kind) {
  into.resize(counters_->size());
  if (order == CounterSet::CallerReads::First) wall = now_ns();
  counters_->read(into.data(), order, kind == ScopeKind::Node || kind == ScopeKind::Batch);
  if (order == CounterSet::CallerReads::Last) wall = now_ns();
}

void Session::read_counters_once() {
  node_end_in_now_ = false;
  std::int64_t wall = 0;
  snapshot(now_, wall, CounterSet::CallerReads::First, ScopeKind::Region);
}

int Session::enclosing_recorded() const {
  for (std::size_t i = depth_; i-- > 0;)
    if (stack_[i].record >= 0) return static_cast<int>(i);
  return -1;
}

int Session::current_record() const {
  const int i = enclosing_recorded();
  return i < 0 ? -1 : stack_[static_cast<std::size_t>(i)].record;
}

void Session::begin(const ScopeLabel& label) {
  require(!finished_, "profiling session already finished; begin() needs a new session");
  require(label.kind != ScopeKind::Gap, "gap scopes are made by the session, not begun");
  if (stack_.size() <= depth_) stack_.emplace_back();
  Open& open = stack_[depth_];
  const Open* parent = depth_ > 0 ? &stack_[depth_ - 1] : nullptr;
  open.label = label;
  open.path = parent ? parent->path + "/" + path_segment(label) : path_segment(label);
  open.epoch = label.kind == ScopeKind::Epoch ? label.index : parent ? parent->epoch : -1;
  open.batch = label.kind == ScopeKind::Batch ? label.index : parent ? parent->batch : -1;
  open.record = -1;
  open.has_children = false;
  open.children_wall = 0;
  const int enclosing = enclosing_recorded();
  ++depth_;
  const bool after_node_end = node_end_in_now_;
  node_end_in_now_ = false;
  if (!records(label.kind)) return;

  ScopeRecord record;
  record.path = open.path;
  record.kind = label.kind;
  record.epoch = open.epoch;
  record.batch = open.batch;
  record.node = node_column(label);
  record.name = label.name;
  record.index = label.index;
  record.parent = enclosing >= 0 ? stack_[enclosing].record : -1;
  record.depth = enclosing >= 0 ? profile_.records[stack_[enclosing].record].depth + 1 : 0;
  open.record = static_cast<int>(profile_.records.size());
  profile_.records.push_back(std::move(record));
  open.children_sum.assign(profile_.cpus.size() * events_.size(), Count{});
  // A node begun right after a sibling node ended starts from that sibling's end reading, so
  // the boundary between two consecutive nodes costs one read, not two (with a busy compute
  // thread on another CPU each read waits for an interrupt there); what the executable does
  // between the two kernels then counts in the later node rather than in the parent's gap.
  if (after_node_end && label.kind == ScopeKind::Node) {
    open.start = now_;
    open.start_wall = node_end_wall_;
    return;
  }
  // The read comes last so that the bookkeeping above is not counted inside the scope.
  snapshot(open.start, open.start_wall, CounterSet::CallerReads::Last, label.kind);
}

void Session::end(ScopeKind expected) {
  require(depth_ > 0, "profiling: end({}) without an open scope", scope_kind_name(expected));
  const ScopeKind kind = stack_[depth_ - 1].label.kind;
  require(kind == expected, "profiling: end({}) but the innermost open scope is {} ('{}')",
          scope_kind_name(expected), scope_kind_name(kind), stack_[depth_ - 1].path);
  end();
}

void Session::end() {
  require(depth_ > 0, "profiling: end() without an open scope");
  node_end_in_now_ = false;
  Open& open = stack_[depth_ - 1];
  if (open.record < 0) {
    --depth_;
    return;
  }
  std::int64_t end_wall = 0;
  // First, so the bookkeeping below stays outside the scope.
  snapshot(now_, end_wall, CounterSet::CallerReads::First, open.label.kind);
  --depth_;
  if (open.label.kind == ScopeKind::Node) {
    node_end_in_now_ = true;
    node_end_wall_ = end_wall;
  }

  const std::size_t n_events = events_.size();
  std::vector<Count> counts(profile_.cpus.size() * n_events);
  const auto& slots = counters_->slots();
  for (std::size_t s = 0; s < slots.size(); ++s) {
    const CounterReading& a = open.start[s];
    const CounterReading& b = now_[s];
    const std::uint64_t raw = b.value - a.value, enabled = b.enabled - a.enabled,
                        running = b.running - a.running;
    if (running < enabled) profile_.was_multiplexed = true;
    Count& c = counts[static_cast<std::size_t>(slots[s].cpu_index) * n_events +
                      static_cast<std::size_t>(slots[s].event_index)];
    c.value += slots[s].sign * scale_count(raw, enabled, running);
    c.raw += slots[s].sign * static_cast<std::int64_t>(raw);
    if (slots[s].first_term) {
      c.time_enabled += static_cast<std::int64_t>(enabled);
      c.time_running += static_cast<std::int64_t>(running);
    }
  }
  const std::int64_t wall = end_wall - open.start_wall;

  // Tell the enclosing recorded scope what its children counted.
  const int enclosing = enclosing_recorded();
  if (enclosing >= 0) {
    Open& parent = stack_[static_cast<std::size_t>(enclosing)];
    parent.has_children = true;
    parent.children_wall += wall;
    for (std::size_t i = 0; i < counts.size(); ++i) {
      parent.children_sum[i].value += counts[i].value;
      parent.children_sum[i].raw += counts[i].raw;
      parent.children_sum[i].time_enabled += counts[i].time_enabled;
      parent.children_sum[i].time_running += counts[i].time_running;
    }
  }

  // The gap: what this scope counted outside its children, as parent − Σ children, so that
  // children + gap = parent holds exactly.
  ScopeRecord& record = profile_.records[static_cast<std::size_t>(open.record)];
  record.wall_ns = wall;
  if (open.has_children) {
    ScopeRecord gap;
    gap.path = record.path + "/gap";
    gap.kind = ScopeKind::Gap;
    gap.epoch = record.epoch;
    gap.batch = record.batch;
    gap.parent = open.record;
    gap.depth = record.depth + 1;
    gap.wall_ns = wall - open.children_wall;
    gap.counts.resize(counts.size());
    for (std::size_t i = 0; i < counts.size(); ++i) {
      gap.counts[i].value = counts[i].value - open.children_sum[i].value;
      gap.counts[i].raw = counts[i].raw - open.children_sum[i].raw;
      gap.counts[i].time_enabled = counts[i].time_enabled - open.children_sum[i].time_enabled;
      gap.counts[i].time_running = counts[i].time_running - open.children_sum[i].time_running;
    }
    record.counts = std::move(counts);
    profile_.records.push_back(std::move(gap));
  } else {
    record.counts = std::move(counts);
  }
}

Profile Session::finish() {
  require(!finished_, "profiling session already finished");
  while (depth_ > 0) {
    log::warn("profiling: scope '{}' was still open when the session finished; closed it there",
              stack_[depth_ - 1].path);
    end();
  }
  finished_ = true;
  counters_.reset();
  Session* self = this;
  g_current.compare_exchange_strong(self, nullptr);
  return std::move(profile_);
}

Scope::Scope(Session& session, const ScopeLabel& label) : Scope(&session, label) {}

Scope::Scope(Session* session, const ScopeLabel& label) {
  if (!session) return;
  session->begin(label);
  session_ = session;
}

Scope::Scope(const ScopeLabel& label) : Scope(Session::current(), label) {}

Scope::~Scope() {
  if (!session_) return;
  try {
    session_->end();
  } catch (const std::exception& e) {
    log::warn("profiling: {}", e.what());
  }
}

}  // namespace telar::prof
