#pragma once
// Pinning thread workers to cores. Left to the scheduler, the placement of workers that share
// one machine can change under a running pair (a slowed worker that sleeps between bursts wakes
// up wherever there is room), so a split measured in the warm-up need not hold in training;
// pinned pairs measured faster and steadier (docs/benchmarks.md). A worker's thread is pinned to
// its cores before it starts; the threads it starts (its OpenMP pool, its collective thread)
// inherit the set.
#include <vector>

namespace telar::dist {

// The CPUs this process may run on (its affinity mask), ascending.
std::vector<int> allowed_cpus();

// Consecutive slices of `allowed`, worker i getting threads[i] CPUs. Empty when the workers'
// threads do not fit (more threads than CPUs): then nothing is pinned.
std::vector<std::vector<int>> plan_pinning(const std::vector<int>& threads,
                                           const std::vector<int>& allowed);

// Restricts the calling thread to `cpus`. Returns false (and changes nothing) where the system
// refuses it.
bool pin_this_thread(const std::vector<int>& cpus);

// The CPUs the calling thread may run on, ascending.
std::vector<int> this_thread_cpus();

}  // namespace telar::dist
