#pragma once
// The profiler's step of `telar demo`: profiles real work at nested scopes (run ⊃ epoch ⊃ batch
// ⊃ node forward/backward) with software events (and hardware ones where the PMU allows), prints
// a short table and writes counters.csv, metrics.csv and report.html into out_dir.
#include <filesystem>

namespace telar::cli {

void demo_profiler_step(const std::filesystem::path& out_dir);

}  // namespace telar::cli
