// What profiling costs a real training loop, measured in one process: the seed-001 CNN on the
// CPU backend (all cores), batch 128, the Trainer with SGD momentum over synthetic
// Fashion-MNIST-shaped data, ten batches per epoch, with batch scopes (mode 1) and with node
// scopes (mode 2), events task-clock, page-faults, context-switches (TELAR_BENCH_EVENTS=NAME
// counts that one event instead).
//
// Every iteration trains four epochs, without, with, with and without a fresh profiler
// (counters opened before and closed after, neither timed), so the two sides share the
// machine's state of that moment and neither always goes first. The iteration time is the two
// profiled epochs'; `overhead_%` is the median over the iterations of profiled / unprofiled − 1
// (an iteration that a burst of other work on the machine hit does not move it), and
// `without_ms`/`with_ms` are the mean epoch times. On a shared machine the noise between
// separately timed runs is larger than the 1 % being measured; side by side it is not.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <vector>

#include "backend/backend.hpp"
#include "graph/loss.hpp"
#include "graph/zoo/zoo.hpp"
#include "prof/training_profiler.hpp"
#include "train/callbacks/profile_callback.hpp"
#include "train/data/data_loader.hpp"
#include "train/data/synthetic.hpp"
#include "train/optim/sgd.hpp"
#include "train/trainer.hpp"

namespace {

using namespace telar;

constexpr std::int64_t kBatches = 10;  // per epoch

void BM_ProfilingOverhead(benchmark::State& state) {
  const int mode = static_cast<int>(state.range(0));  // 1 batch scopes, 2 node scopes
  const graph::Graph model = graph::zoo::build("mnist_cnn");
  const graph::Graph g = graph::with_loss(model, graph::LossKind::CrossEntropy);
  graph::ParameterSet params = graph::ParameterSet::initialize(g, 1);
  auto exe = backend::compile(backend::parse_backend_spec("cpu"), g, params, {1});
  train::SyntheticSpec spec;
  spec.samples = 128 * kBatches;
  spec.sample_shape = {1, 28, 28};
  spec.num_classes = 10;
  train::DataLoader loader(train::make_synthetic_classification(spec), {128, true, true, 1});
  train::Sgd sgd({0.9f, false, 0.0f});
  const auto epoch_seconds = [&](train::Callback* callback) {
    train::Trainer trainer(*exe, params, sgd, train::LrSchedule::constant(0.01), {});
    if (callback) trainer.add_callback(callback);
    const auto start = std::chrono::steady_clock::now();
    trainer.fit(loader, nullptr);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  epoch_seconds(nullptr);  // plans, primitives and OpenMP threads exist before anything is timed
  prof::SessionOptions o;
  o.events = {"task-clock", "page-faults", "context-switches"};
  if (const char* e = std::getenv("TELAR_BENCH_EVENTS")) o.events = {e};
  o.scopes = prof::ScopeSet::parse(mode == 1 ? "run,epoch,batch" : "run,epoch,batch,node");
  double with = 0, without = 0;
  std::vector<double> ratios;
  const auto profiled_epoch_seconds = [&] {
    prof::TrainingProfiler profiler(o);
    train::ProfileCallback callback(profiler, mode == 2);
    return epoch_seconds(&callback);
  };
  for (auto _ : state) {
    double plain = epoch_seconds(nullptr);
    const double profiled = profiled_epoch_seconds() + profiled_epoch_seconds();
    plain += epoch_seconds(nullptr);
    with += profiled;
    without += plain;
    ratios.push_back(profiled / plain);
    state.SetIterationTime(profiled);
  }
  const auto n = static_cast<double>(ratios.size());
  std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2),
                   ratios.end());
  state.counters["without_ms"] = 1e3 * without / (2 * n);
  state.counters["with_ms"] = 1e3 * with / (2 * n);
  state.counters["overhead_%"] = 100.0 * (ratios[ratios.size() / 2] - 1.0);
}
BENCHMARK(BM_ProfilingOverhead)
    ->Arg(1)->Arg(2)
    ->ArgName("mode")
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->MinTime(8.0);

}  // namespace

BENCHMARK_MAIN();
