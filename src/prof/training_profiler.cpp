#include "prof/training_profiler.hpp"

namespace telar::prof {

TrainingProfiler::TrainingProfiler(SessionOptions options) : session_(std::move(options)) {}

}  // namespace telar::prof
