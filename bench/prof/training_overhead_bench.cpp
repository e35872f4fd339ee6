// What profiling costs a real training loop, measured in one process: the seed-001 CNN on the
// CPU backend (all cores), batch 128, the Trainer with SGD momentum over synthetic
// Fashion-MNIST-shaped data, run without a profiler, with batch scopes and with node scopes
// (events task-clock, page-faults, context-switches, as bench/prof/profile_overhead.sh).
// Run with --benchmark_repetitions=N --benchmark_enable_random_interleaving=true so the three
// modes alternate and share the machine's moods; compare the medians.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>

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

constexpr std::int64_t kBatches = 10;  // per benchmark iteration (one short epoch)

void BM_ProfiledTraining(benchmark::State& state) {
  const int mode = static_cast<int>(state.range(0));  // 0 none, 1 batch scopes, 2 node scopes
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
  train::TrainerOptions options;
  train::Trainer trainer(*exe, params, sgd, train::LrSchedule::constant(0.01), options);
  // Plans, primitives and OpenMP threads exist before anything is timed.
  trainer.fit(loader, nullptr);

  std::unique_ptr<prof::TrainingProfiler> profiler;
  std::unique_ptr<train::ProfileCallback> callback;
  if (mode > 0) {
    prof::SessionOptions o;
    o.events = {"task-clock", "page-faults", "context-switches"};
    if (const char* e = std::getenv("TELAR_BENCH_EVENTS")) o.events = {e};  // one event, to compare
    o.scopes = prof::ScopeSet::parse(mode == 1 ? "run,epoch,batch" : "run,epoch,batch,node");
    profiler = std::make_unique<prof::TrainingProfiler>(o);
    callback = std::make_unique<train::ProfileCallback>(*profiler, mode == 2);
    trainer.add_callback(callback.get());
  }
  for (auto _ : state) {
    train::Progress p = trainer.progress();
    p.epoch = 0;  // one more epoch of kBatches each iteration
    p.next_batch = 0;
    p.loss_sum = 0;
    p.correct = p.samples = 0;
    p.seconds = 0;
    trainer.set_progress(p);
    trainer.fit(loader, nullptr);
  }
  if (profiler) state.counters["records"] = static_cast<double>(profiler->finish().records.size());
  state.counters["samples/s"] =
      benchmark::Counter(static_cast<double>(128 * kBatches), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ProfiledTraining)
    ->Arg(0)->Arg(1)->Arg(2)
    ->ArgName("mode")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
