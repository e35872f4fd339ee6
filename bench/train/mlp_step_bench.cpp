// Where one training step of the Fashion-MNIST MLP (784-256-128-10, batch 128, SGD with
// momentum 0.9) spends its time, at 1 and 2 threads: the whole step as the Trainer runs it, and
// its parts apart (batch gather, forward, backward, optimizer update). Arguments: the thread
// count, and whether the CPU backend splits the batch across the threads (1, the default) or
// splits every primitive (0, cpu:split=off). Speed goals are read from here and from
// bench/peer_compare.sh, never asserted.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "backend/backend.hpp"
#include "core/threads.hpp"
#include "graph/loss.hpp"
#include "graph/zoo/zoo.hpp"
#include "train/data/data_loader.hpp"
#include "train/data/synthetic.hpp"
#include "train/evaluate.hpp"
#include "train/optim/optimizer.hpp"
#include "train/trainer.hpp"

using namespace telar;

namespace {

constexpr std::int64_t kBatch = 128;
constexpr std::int64_t kSamples = 60000;  // Fashion-MNIST's training set: a gather from DRAM

struct MlpSetup {
  MlpSetup(int threads, bool split)
      : data(make_data()),
        graph(graph::with_loss(graph::zoo::build("mlp:784-256-128-10", {Shape{1, 28, 28}, 10}),
                               graph::LossKind::CrossEntropy)),
        params(graph::ParameterSet::initialize(graph, 1)),
        exe(backend::compile(backend::parse_backend_spec("cpu:threads=" + std::to_string(threads) +
                                                         (split ? "" : ":split=off")),
                             graph, params)),
        optimizer(train::make_optimizer({"sgd", 0.9f})),
        loader(data, {kBatch, true, true, 1}),
        loss_seed(Shape{}) {
    loss_seed.f32()[0] = 1.0f;
    output_grads = {Tensor(), loss_seed};
  }
  static train::Dataset make_data() {
    train::SyntheticSpec spec;
    spec.samples = kSamples;
    spec.sample_shape = {1, 28, 28};
    spec.num_classes = 10;
    return train::make_synthetic_classification(spec);
  }
  void forward(const train::Batch& b) {
    inputs = {b.images, b.labels};
    exe->forward(inputs, backend::Mode::Train);
  }
  void backward() { exe->backward(output_grads); }
  void update() {
    optimizer->step(params, exe->gradients(), graph.parameters(), 0.05f);
    exe->parameters_updated();
  }

  train::Dataset data;
  graph::Graph graph;
  graph::ParameterSet params;
  std::unique_ptr<backend::Executable> exe;
  std::unique_ptr<train::Optimizer> optimizer;
  train::DataLoader loader;
  Tensor loss_seed;
  std::vector<Tensor> inputs, output_grads;
};

MlpSetup& setup(const benchmark::State& state) {
  static std::unique_ptr<MlpSetup> s;
  static std::int64_t made_for = -1;
  const int threads = static_cast<int>(state.range(0));
  const bool split = state.range(1) != 0;
  if (made_for != threads * 2 + split) {
    s.reset();
    s = std::make_unique<MlpSetup>(threads, split);
    made_for = threads * 2 + split;
    for (int i = 0; i < 5; ++i) {  // primitives, plans and optimizer state are made lazily
      s->forward(s->loader.batch(0, i));
      s->backward();
      s->update();
    }
  }
  return *s;
}

void report(benchmark::State& state) {
  state.counters["samples_per_s"] = benchmark::Counter(
      static_cast<double>(kBatch), benchmark::Counter::kIsIterationInvariantRate);
}

std::int64_t next(std::int64_t& i, const train::DataLoader& loader) {
  i = (i + 1) % loader.batches_per_epoch();
  return i;
}

// The whole step through the Trainer's work: gather, forward, metrics, backward, update.
void BM_MlpStep(benchmark::State& state) {
  MlpSetup& s = setup(state);
  std::int64_t i = 0;
  std::int64_t correct = 0;
  for (auto _ : state) {
    const train::Batch& b = s.loader.batch(0, next(i, s.loader));
    s.forward(b);
    correct += train::count_correct(s.exe->output(0), b.labels);
    s.backward();
    s.update();
  }
  benchmark::DoNotOptimize(correct);
  report(state);
}

void BM_MlpGather(benchmark::State& state) {
  MlpSetup& s = setup(state);
  std::int64_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(s.loader.batch(0, next(i, s.loader)).images.raw());
  report(state);
}

void BM_MlpForward(benchmark::State& state) {
  MlpSetup& s = setup(state);
  const train::Batch& b = s.loader.batch(0, 0);
  for (auto _ : state) s.forward(b);
  report(state);
}

void BM_MlpForwardBackward(benchmark::State& state) {
  MlpSetup& s = setup(state);
  const train::Batch& b = s.loader.batch(0, 0);
  for (auto _ : state) {
    s.forward(b);
    s.backward();
  }
  report(state);
}

void BM_MlpUpdate(benchmark::State& state) {
  MlpSetup& s = setup(state);
  for (auto _ : state) s.update();
  report(state);
}

}  // namespace

BENCHMARK(BM_MlpStep)
    ->Args({1, 1})
    ->Args({2, 1})
    ->Args({2, 0})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_MlpGather)
    ->Args({1, 1})
    ->Args({2, 1})
    ->Args({2, 0})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_MlpForward)
    ->Args({1, 1})
    ->Args({2, 1})
    ->Args({2, 0})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_MlpForwardBackward)
    ->Args({1, 1})
    ->Args({2, 1})
    ->Args({2, 0})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_MlpUpdate)
    ->Args({1, 1})
    ->Args({2, 1})
    ->Args({2, 0})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

BENCHMARK_MAIN();
