#pragma once
// A profiling session: counters opened once and left running; scopes read them at their
// boundaries. Scopes nest (run ⊃ epoch ⊃ batch ⊃ node forward/backward, and eval), all in one
// run, and a parent's counts equal its children's plus its gap record exactly, because the gap is
// computed from the very same boundary reads as the parent and its children.
//
//   prof::Session session({.events = {"task-clock", "cycles"}});
//   session.begin(prof::ScopeLabel::run());
//   for (epoch ...) {
//     prof::Scope e(session, prof::ScopeLabel::epoch(i));
//     ...
//   }
//   session.end(prof::ScopeKind::Run);
//   prof::Profile profile = session.finish();
//
// begin()/end() are meant to be called from one thread (the one driving the work, e.g. the
// training loop); the counters themselves count every thread of the process (or every CPU).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "prof/counter_set.hpp"
#include "prof/event.hpp"
#include "prof/profile.hpp"
#include "prof/scope.hpp"

namespace telar::prof {

struct SessionOptions {
  std::vector<std::string> events;  // names as the user wrote them
  CountingOptions counting;
  ScopeSet scopes = ScopeSet::all();  // kinds that are recorded (others are tracked, not read)
};

class Session {
 public:
  // Resolves the event names, checks perf_event_paranoid, opens the counters (they start
  // counting now). Throws telar::Error on unknown events, missing permissions, groups that cannot
  // fit without multiplexing. Events this machine cannot count are reported once on stderr and
  // left out; software events and wall time keep working.
  explicit Session(SessionOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void begin(const ScopeLabel& label);
  // Closes the innermost open scope. Throws telar::Error if none is open.
  void end();
  // Closes the innermost open scope after checking that it is of kind `expected`.
  void end(ScopeKind expected);

  bool records(ScopeKind kind) const { return options_.scopes.contains(kind); }
  // Index in the profile's records of the innermost open recorded scope; -1 if none.
  int current_record() const;
  std::size_t open_scopes() const { return depth_; }

  // Closes scopes still open, stops counting and returns what was recorded. The session can
  // record nothing after this.
  Profile finish();

  const std::vector<ResolvedEvent>& events() const { return events_; }
  Domain domain() const { return domain_; }
  const CountingOptions& counting() const { return options_.counting; }
  std::size_t counter_count() const { return counters_ ? counters_->size() : 0; }

  // Reads every counter once (what a scope boundary costs), for benchmarks.
  void read_counters_once();

  // The session that Scope(label) without a session uses; set by make_current(), cleared when
  // this session is destroyed or finished.
  static Session* current();
  void make_current();

 private:
  struct Open {
    ScopeLabel label;
    std::string path;
    std::int64_t epoch = -1, batch = -1;
    int record = -1;  // index in profile_.records, or -1 if this kind is not recorded
    std::int64_t start_wall = 0;
    std::vector<CounterReading> start;
    std::vector<Count> children_sum;
    std::int64_t children_wall = 0;
    bool has_children = false;
  };
  // Reads every counter into `into` and the wall clock into `wall`. `order` says whether this
  // thread's time spent in the read falls after the reading (a scope ends here: First) or before
  // it (a scope begins here: Last), and the wall clock is taken on the same side. `kind` is the
  // scope's: node and batch boundaries lie between kernels, where the compute pool reads its own
  // counters; run, epoch and eval boundaries are read by the caller alone.
  void snapshot(std::vector<CounterReading>& into, std::int64_t& wall, CounterSet::CallerReads order,
                ScopeKind kind);
  int enclosing_recorded() const;  // index in stack_ of the innermost recorded open scope

  SessionOptions options_;
  Domain domain_ = Domain::All;
  std::vector<ResolvedEvent> events_;
  std::unique_ptr<CounterSet> counters_;
  std::vector<Open> stack_;  // grows, never shrinks, so boundary reads reuse its buffers
  std::size_t depth_ = 0;
  std::vector<CounterReading> now_;  // the latest reading
  // The latest boundary was the end of a recorded node scope, read into now_ at this time: a
  // node scope begun next starts from that reading instead of reading again.
  bool node_end_in_now_ = false;
  std::int64_t node_end_wall_ = 0;
  Profile profile_;
  bool finished_ = false;
};

// RAII scope: begin() on construction, end() on destruction. With no session (or when built
// with the one-argument form and no session is current) it does nothing, so library code can
// be instrumented unconditionally.
class Scope {
 public:
  Scope(Session& session, const ScopeLabel& label);
  Scope(Session* session, const ScopeLabel& label);
  explicit Scope(const ScopeLabel& label);  // uses Session::current()
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  Session* session_ = nullptr;
};

}  // namespace telar::prof
