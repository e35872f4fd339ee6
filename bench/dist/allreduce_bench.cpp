// The thread communicator's sample-weighted mean over the seed-001 CNN's gradients (1.65 M
// floats in four tensors), two members on two threads: the per-step exchange of data-parallel
// training with `--workers cpu:threads=1,cpu:threads=1`.
#include <benchmark/benchmark.h>

#include <thread>
#include <vector>

#include "dist/thread_communicator.hpp"

namespace {

void BM_ThreadWeightedMean(benchmark::State& state) {
  const std::vector<std::size_t> sizes = {800, 25'600, 1'605'632, 10'240};  // conv1, conv2, fc1, fc2
  telar::dist::ThreadGroup group(2);
  std::vector<std::vector<std::vector<float>>> grads(2);
  std::vector<std::vector<std::span<float>>> parts(2);
  for (int m = 0; m < 2; ++m)
    for (std::size_t s : sizes) {
      grads[m].emplace_back(s, 0.5f + static_cast<float>(m));
      parts[m].emplace_back(grads[m].back());
    }
  std::size_t total = 0;
  for (std::size_t s : sizes) total += s;
  const auto steps = static_cast<std::int64_t>(state.max_iterations);
  std::thread other([&] {
    for (std::int64_t i = 0; i < steps; ++i) group.member(1).all_reduce_weighted_mean(parts[1], 48.0f);
  });
  for (auto _ : state) group.member(0).all_reduce_weighted_mean(parts[0], 80.0f);
  other.join();
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(2 * total * sizeof(float)));
}
BENCHMARK(BM_ThreadWeightedMean)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
