// What profiling costs: the counter read at a scope boundary (ns per boundary, by number of
// events), a scope of a kind that is tracked but not recorded, a Scope with no session, and a
// training-shaped workload (batches of 9 layers, forward and backward) run without profiling,
// with batch scopes and with node scopes, so that the overhead of each can be stated; and node
// boundaries between kernels on the compute pool, read by the caller or by the pool itself.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "core/threads.hpp"
#include "prof/matmul/kernels.hpp"
#include "prof/session.hpp"

using namespace telar::prof;

namespace {

std::vector<std::string> software_events(int n) {
  const std::vector<std::string> all = {"task-clock",     "page-faults", "context-switches",
                                        "cpu-migrations", "cpu-clock",   "minor-faults"};
  return {all.begin(), all.begin() + n};
}

std::unique_ptr<Session> make_session(int events, const char* scopes = "all") {
  SessionOptions o;
  o.events = software_events(events);
  o.scopes = ScopeSet::parse(scopes);
  return std::make_unique<Session>(o);
}

// One scope = two boundaries (its begin and its end), each one counter read (region scopes:
// consecutive node scopes would share the reading between them).
void BM_ScopeBoundary(benchmark::State& state) {
  auto session = make_session(static_cast<int>(state.range(0)));
  session->begin(ScopeLabel::run());
  session->begin(ScopeLabel::batch(0));
  for (auto _ : state) {
    session->begin(ScopeLabel::region("conv2"));
    session->end();
  }
  // Seconds per boundary (shown in ns by the unit above): elapsed time / (2 × iterations).
  state.counters["boundaries"] = benchmark::Counter(
      2.0, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  session->end();
  session->end();
  session->finish();
}
BENCHMARK(BM_ScopeBoundary)->Arg(1)->Arg(3)->Arg(6)->Unit(benchmark::kNanosecond);

// The same with another thread of the process busy on the other core (as oneDNN's OpenMP
// workers spin between primitives): its counters must be read too. Arg: 0 the busy thread
// existed before the session (its own counters), 1 it was started after (inherited).
void BM_ScopeBoundaryBusyThread(benchmark::State& state) {
  std::atomic<bool> stop{false};
  auto spin = [&] {
    while (!stop.load(std::memory_order_relaxed)) {
    }
  };
  std::unique_ptr<Session> session;
  std::thread busy;
  if (state.range(0) == 0) {
    busy = std::thread(spin);
    session = make_session(3);
  } else {
    session = make_session(3);
    busy = std::thread(spin);
  }
  session->begin(ScopeLabel::run());
  session->begin(ScopeLabel::batch(0));
  for (auto _ : state) {
    session->begin(ScopeLabel::region("conv2"));
    session->end();
  }
  state.counters["boundaries"] = benchmark::Counter(
      2.0, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  stop = true;
  busy.join();
  session->end();
  session->end();
  session->finish();
}
BENCHMARK(BM_ScopeBoundaryBusyThread)->Arg(0)->Arg(1)->Unit(benchmark::kNanosecond)->UseRealTime();

// Boundaries between kernels on the compute pool, as in node-scope profiling of a CPU backend:
// a short parallel region (the kernel; afterwards the pool's other threads spin waiting for
// the next one), then one node scope. Arg 0: the caller reads every thread's counters (a
// spinning thread on another CPU must be interrupted for it), Arg 1: compute_pool, each pool
// thread reads its own. Time per kernel + scope; run with Arg -1 for the kernels alone.
void BM_NodeBoundaryOnComputePool(benchmark::State& state) {
  const int mode = static_cast<int>(state.range(0));
  std::unique_ptr<Session> session;
  if (mode >= 0) {
    SessionOptions o;
    o.events = software_events(3);
    o.counting.compute_pool = mode == 1;
    session = std::make_unique<Session>(o);
    session->begin(ScopeLabel::run());
  }
  std::vector<double> sink(static_cast<std::size_t>(telar::compute_threads()) * 8, 0.0);
  const auto kernel = [&] {
#pragma omp parallel
    {
      double x = 1.0;
      for (int i = 0; i < 20000; ++i) x = x * 1.0000001 + 1e-9;
      sink[static_cast<std::size_t>(omp_get_thread_num()) * 8] += x;
    }
  };
  for (auto _ : state) {
    kernel();
    Scope node(session.get(), ScopeLabel::node("conv2", Pass::Forward));
    kernel();
  }
  benchmark::DoNotOptimize(sink.data());
  if (session) {
    session->end();
    session->finish();
  }
}
BENCHMARK(BM_NodeBoundaryOnComputePool)->Arg(-1)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The read alone (no bookkeeping).
void BM_CounterRead(benchmark::State& state) {
  auto session = make_session(static_cast<int>(state.range(0)));
  for (auto _ : state) session->read_counters_once();
}
BENCHMARK(BM_CounterRead)->Arg(1)->Arg(3)->Arg(6)->Unit(benchmark::kNanosecond);

// Node scopes when --profile-scopes leaves node out: tracked for paths, not read.
void BM_UnrecordedScope(benchmark::State& state) {
  auto session = make_session(3, "run,epoch,batch");
  session->begin(ScopeLabel::run());
  for (auto _ : state) {
    session->begin(ScopeLabel::node("conv2", Pass::Forward));
    session->end();
  }
  session->end();
  session->finish();
}
BENCHMARK(BM_UnrecordedScope)->Unit(benchmark::kNanosecond);

// Instrumented code with no session at all.
void BM_ScopeWithoutSession(benchmark::State& state) {
  for (auto _ : state) {
    Scope s(static_cast<Session*>(nullptr), ScopeLabel::node("conv2", Pass::Forward));
    benchmark::DoNotOptimize(&s);
  }
}
BENCHMARK(BM_ScopeWithoutSession)->Unit(benchmark::kNanosecond);

// A batch shaped like the seed's CNN step: 9 layers forward then backward (the backward pass
// twice the work), each a double product. Layers here last tens of microseconds (scale 1) to a
// few hundred (scale 2), far shorter than the CNN's layers at batch 1024, so the relative
// overheads are upper bounds. Args: mode (0 no profiling, 1 batch scopes, 2 node scopes), scale.
void BM_TrainingLikeBatch(benchmark::State& state) {
  const int mode = static_cast<int>(state.range(0));
  const int scale = static_cast<int>(state.range(1));
  std::unique_ptr<Session> session;
  if (mode > 0) session = make_session(3, mode == 1 ? "run,epoch,batch" : "run,epoch,batch,node");
  int sizes[9] = {48, 24, 48, 24, 24, 64, 24, 32, 16};
  for (int& n : sizes) n *= scale;
  const std::size_t largest = static_cast<std::size_t>(64 * scale * 64 * scale);
  std::vector<double> a(largest, 0.5), b(largest, 0.25), c(largest);
  const char* names[9] = {"conv1", "relu1", "conv2", "relu2", "pool",
                          "fc1",   "relu3", "fc2",   "loss"};
  if (session) session->begin(ScopeLabel::run());
  std::int64_t batch = 0;
  for (auto _ : state) {
    Scope scope(session.get(), ScopeLabel::batch(batch++));
    for (int l = 0; l < 9; ++l) {
      Scope node(session.get(), ScopeLabel::node(names[l], Pass::Forward));
      matmul::naive_o3(a.data(), b.data(), c.data(), sizes[l]);
    }
    for (int l = 8; l >= 0; --l) {
      Scope node(session.get(), ScopeLabel::node(names[l], Pass::Backward));
      matmul::naive_o3(a.data(), b.data(), c.data(), sizes[l]);
      matmul::naive_o3(a.data(), b.data(), c.data(), sizes[l]);
    }
  }
  if (session) {
    session->end();
    state.counters["records"] = static_cast<double>(session->finish().records.size());
  }
}
BENCHMARK(BM_TrainingLikeBatch)
    ->ArgsProduct({{0, 1, 2}, {1, 2}})
    ->ArgNames({"mode", "scale"})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
