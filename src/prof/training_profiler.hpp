#pragma once
// The profiler as the Trainer sees it: one method per Callback hook, each opening or closing
// the matching scope of a Session. A train/ Callback forwards its hooks here one to one:
//
//   on_train_begin  -> run                  on_epoch_begin(e) -> run/epoch[e]
//   on_batch_begin(b) -> .../batch[b]       on_eval_begin     -> .../eval (its batches nest in it)
//   on_node_begin(name, backward) -> .../node[name].fwd or .bwd
//
// Every *_end checks that it closes the scope its *_begin opened, so a hook fired out of order
// is reported (telar::Error) instead of silently mis-attributing counts.
#include <cstdint>
#include <string_view>

#include "prof/session.hpp"

namespace telar::prof {

class TrainingProfiler {
 public:
  // Where the training computes. ComputePool: on this thread's compute pool, which is started
  // now (unless counting per CPU) so that its threads read their own counters at scope
  // boundaries (CountingOptions::compute_pool). WorkerThreads: on data-parallel worker threads
  // started after the profiler (each with its own pool and collective thread), which inherit
  // the counters; the scope hooks then come from one worker and count the whole process.
  enum class Work { ComputePool, WorkerThreads };

  // Opens the counters now, on every thread the process has; threads started later inherit
  // them.
  explicit TrainingProfiler(SessionOptions options, Work work = Work::ComputePool);

  void on_train_begin() { session_.begin(ScopeLabel::run()); }
  void on_train_end() { session_.end(ScopeKind::Run); }
  void on_epoch_begin(std::int64_t epoch) { session_.begin(ScopeLabel::epoch(epoch)); }
  void on_epoch_end() { session_.end(ScopeKind::Epoch); }
  void on_batch_begin(std::int64_t batch) { session_.begin(ScopeLabel::batch(batch)); }
  void on_batch_end() { session_.end(ScopeKind::Batch); }
  void on_eval_begin() { session_.begin(ScopeLabel::eval()); }
  void on_eval_end() { session_.end(ScopeKind::Eval); }
  void on_node_begin(std::string_view node, bool backward) {
    session_.begin(ScopeLabel::node(node, backward ? Pass::Backward : Pass::Forward));
  }
  void on_node_end() { session_.end(ScopeKind::Node); }

  Session& session() { return session_; }
  // Closes what is still open (an exception left the loop) and returns the profile.
  Profile finish() { return session_.finish(); }

 private:
  Session session_;
};

}  // namespace telar::prof
