#include "prof/training_profiler.hpp"

namespace telar::prof {

namespace {

// Training computes on the compute pool, so its threads read their own counters (see
// CountingOptions::compute_pool).
SessionOptions on_compute_pool(SessionOptions options) {
  options.counting.compute_pool =
      options.counting.mode == CountingMode::PerThread && options.counting.target_pid == 0;
  return options;
}

}  // namespace

TrainingProfiler::TrainingProfiler(SessionOptions options)
    : session_(on_compute_pool(std::move(options))) {}

}  // namespace telar::prof
