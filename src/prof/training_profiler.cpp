#include "prof/training_profiler.hpp"

namespace telar::prof {

namespace {

// Training on the compute pool: its threads read their own counters (see
// CountingOptions::compute_pool). Worker threads are not that pool: starting it would only
// leave idle threads spinning beside the workers.
SessionOptions for_work(SessionOptions options, TrainingProfiler::Work work) {
  options.counting.compute_pool = work == TrainingProfiler::Work::ComputePool &&
                                  options.counting.mode == CountingMode::PerThread &&
                                  options.counting.target_pid == 0;
  return options;
}

}  // namespace

TrainingProfiler::TrainingProfiler(SessionOptions options, Work work)
    : session_(for_work(std::move(options), work)) {}

}  // namespace telar::prof
