// The checks that hold on a machine without a hardware PMU, with software events: scopes nest in
// one run, children plus gap equal the parent exactly, the epochs add up to the run, node scopes
// cover the forward and backward pass of every node, threads are counted.
#include "prof/session.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/threads.hpp"
#include "prof/permissions.hpp"
#include "prof/training_profiler.hpp"
#include "test_work.hpp"

using namespace telar::prof;
using telar::prof::testing::small_matmul;
using telar::prof::testing::spin_cpu_ns;
using telar::prof::testing::process_cpu_ns;
using telar::prof::testing::thread_cpu_ns;

namespace {

SessionOptions software_events(ScopeSet scopes = ScopeSet::all()) {
  SessionOptions o;
  o.events = {"task-clock", "page-faults", "context-switches"};
  o.scopes = scopes;
  return o;
}

const std::vector<std::string> kNodes = {"fc1", "relu", "fc2"};

// A training-shaped run: epochs of batches, each batch the forward pass of every node then the
// backward pass in reverse, an eval pass at the end of each epoch; real work in every node.
// node_cpu_ns > 0: each node burns that much CPU time instead of a fixed-size product.
void simulate_training(Session& s, int epochs, int batches, int matmul_n = 24,
                       std::int64_t node_cpu_ns = 0) {
  auto node_work = [&](std::uint32_t seed) {
    return node_cpu_ns > 0 ? spin_cpu_ns(node_cpu_ns) : small_matmul(matmul_n, seed);
  };
  s.begin(ScopeLabel::run());
  for (int e = 0; e < epochs; ++e) {
    s.begin(ScopeLabel::epoch(e));
    for (int b = 0; b < batches; ++b) {
      Scope batch(s, ScopeLabel::batch(b));
      volatile double sink = small_matmul(8, static_cast<std::uint32_t>(b));  // "data loading"
      for (const auto& n : kNodes) {
        Scope node(s, ScopeLabel::node(n, Pass::Forward));
        sink = sink + node_work(static_cast<std::uint32_t>(b));
      }
      for (auto it = kNodes.rbegin(); it != kNodes.rend(); ++it) {
        Scope node(s, ScopeLabel::node(*it, Pass::Backward));
        sink = sink + node_work(static_cast<std::uint32_t>(b + 1));
      }
    }
    {
      Scope eval(s, ScopeLabel::eval());
      for (int b = 0; b < 2; ++b) {
        Scope batch(s, ScopeLabel::batch(b));
        for (const auto& n : kNodes) {
          Scope node(s, ScopeLabel::node(n, Pass::Forward));
          volatile double sink = node_work(7);
          (void)sink;
        }
      }
    }
    s.end(ScopeKind::Epoch);
  }
  s.end(ScopeKind::Run);
}

const ScopeRecord* find(const Profile& p, const std::string& path) {
  for (const auto& r : p.records)
    if (r.path == path) return &r;
  return nullptr;
}

std::int64_t task_clock(const Profile& p, const ScopeRecord& r) {
  return p.total(r, 0);
}

}  // namespace

TEST(ProfSession, NestedScopesOfEveryKindInOneRun) {
  Session s(software_events());
  simulate_training(s, 2, 3);
  const Profile p = s.finish();
  // Written out by hand: the paths a run of 2 epochs × 3 batches × 3 nodes must produce.
  for (const char* path :
       {"run", "run/epoch[0]", "run/epoch[1]", "run/epoch[0]/batch[0]", "run/epoch[1]/batch[2]",
        "run/epoch[0]/batch[1]/node[fc1].fwd", "run/epoch[0]/batch[1]/node[fc1].bwd",
        "run/epoch[1]/batch[2]/node[relu].bwd", "run/epoch[0]/eval", "run/epoch[0]/eval/batch[1]",
        "run/epoch[1]/eval/batch[0]/node[fc2].fwd", "run/gap", "run/epoch[0]/gap",
        "run/epoch[0]/batch[0]/gap"})
    EXPECT_NE(find(p, path), nullptr) << path;
  // 1 run + 2 epochs + 6 batches + 36 train nodes + 2 evals + 4 eval batches + 12 eval nodes,
  // plus one gap for each scope with children: run, 2 epochs, 6 batches, 2 evals, 4 eval batches.
  EXPECT_EQ(p.records.size(), 1u + 2 + 6 + 36 + 2 + 4 + 12 + (1 + 2 + 6 + 2 + 4));
  const ScopeRecord* node = find(p, "run/epoch[1]/batch[2]/node[fc2].bwd");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->epoch, 1);
  EXPECT_EQ(node->batch, 2);
  EXPECT_EQ(node->node, "fc2.bwd");
  EXPECT_EQ(node->kind, ScopeKind::Node);
  EXPECT_EQ(p.records[static_cast<std::size_t>(node->parent)].path, "run/epoch[1]/batch[2]");
  EXPECT_EQ(node->depth, 3);
  const ScopeRecord* eval = find(p, "run/epoch[1]/eval");
  ASSERT_NE(eval, nullptr);
  EXPECT_EQ(eval->epoch, 1);
  EXPECT_EQ(eval->batch, -1);
}

TEST(ProfSession, ChildrenPlusGapEqualParentExactly) {
  Session s(software_events());
  simulate_training(s, 2, 4);
  const Profile p = s.finish();
  std::size_t parents_checked = 0;
  for (std::size_t i = 0; i < p.records.size(); ++i) {
    const auto children = p.children(i);
    if (children.empty()) continue;
    ++parents_checked;
    const ScopeRecord& parent = p.records[i];
    std::int64_t wall = 0;
    std::vector<Count> sum(parent.counts.size());
    int gaps = 0;
    for (std::size_t c : children) {
      const ScopeRecord& child = p.records[c];
      gaps += child.kind == ScopeKind::Gap;
      wall += child.wall_ns;
      for (std::size_t k = 0; k < sum.size(); ++k) {
        sum[k].value += child.counts[k].value;
        sum[k].raw += child.counts[k].raw;
        sum[k].time_enabled += child.counts[k].time_enabled;
        sum[k].time_running += child.counts[k].time_running;
      }
    }
    EXPECT_EQ(gaps, 1) << parent.path;
    EXPECT_EQ(wall, parent.wall_ns) << parent.path;
    for (std::size_t k = 0; k < sum.size(); ++k) {
      EXPECT_EQ(sum[k].value, parent.counts[k].value) << parent.path << " event " << k;
      EXPECT_EQ(sum[k].raw, parent.counts[k].raw) << parent.path;
      EXPECT_EQ(sum[k].time_enabled, parent.counts[k].time_enabled) << parent.path;
      EXPECT_EQ(sum[k].time_running, parent.counts[k].time_running) << parent.path;
    }
  }
  EXPECT_EQ(parents_checked, 1u + 2 + 8 + 2 + 4);
  // A gap is what the parent counted outside its children: never negative for a counter.
  for (const auto& r : p.records)
    if (r.kind == ScopeKind::Gap) {
      EXPECT_GE(r.wall_ns, 0) << r.path;
      EXPECT_GE(task_clock(p, r), 0) << r.path;
    }
}

TEST(ProfSession, EpochsAddUpToTheRunWithinOnePercentOfTaskClock) {
  Session s(software_events());
  // Epochs of about 40 ms of CPU each; what lies between them is scope bookkeeping only.
  simulate_training(s, 3, 4, 0, 1'000'000);
  const Profile p = s.finish();
  const ScopeRecord* run = find(p, "run");
  ASSERT_NE(run, nullptr);
  std::int64_t epochs = 0;
  for (const ScopeRecord* e : p.of_kind(ScopeKind::Epoch)) epochs += task_clock(p, *e);
  const std::int64_t whole = task_clock(p, *run);
  ASSERT_GT(whole, 0);
  EXPECT_LE(std::abs(static_cast<double>(whole - epochs)) / static_cast<double>(whole), 0.01)
      << "run " << whole << " ns, epochs " << epochs << " ns";
}

TEST(ProfSession, NodeScopesCoverForwardAndBackwardOfEveryNode) {
  Session s(software_events());
  simulate_training(s, 2, 3);
  const Profile p = s.finish();
  std::set<std::string> expected;
  for (const auto& n : kNodes) expected.insert(n + ".fwd"), expected.insert(n + ".bwd");
  std::size_t train_batches = 0;
  for (std::size_t i = 0; i < p.records.size(); ++i) {
    const ScopeRecord& b = p.records[i];
    if (b.kind != ScopeKind::Batch || b.path.find("/eval/") != std::string::npos) continue;
    ++train_batches;
    std::multiset<std::string> seen;
    for (std::size_t c : p.children(i))
      if (p.records[c].kind == ScopeKind::Node) seen.insert(p.records[c].node);
    EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), expected) << b.path;
    EXPECT_EQ(seen.size(), expected.size()) << b.path << ": each node pass exactly once";
  }
  EXPECT_EQ(train_batches, 6u);
}

// Two consecutive nodes share one reading at the boundary between them: work done after one
// node ends and before the next begins counts in the next node, and the parent's gap holds
// only what lies before the first node and after the last.
TEST(ProfSession, ConsecutiveNodesShareTheReadingBetweenThem) {
  Session s(software_events());
  s.begin(ScopeLabel::batch(0));
  s.begin(ScopeLabel::node("a", Pass::Forward));
  spin_cpu_ns(2'000'000);
  s.end();
  spin_cpu_ns(40'000'000);  // between the nodes
  s.begin(ScopeLabel::node("b", Pass::Forward));
  spin_cpu_ns(2'000'000);
  s.end();
  spin_cpu_ns(10'000'000);  // after the last node: the batch's gap
  s.end();
  const Profile p = s.finish();
  const ScopeRecord* a = find(p, "batch[0]/node[a].fwd");
  const ScopeRecord* b = find(p, "batch[0]/node[b].fwd");
  const ScopeRecord* gap = find(p, "batch[0]/gap");
  ASSERT_TRUE(a && b && gap);
  EXPECT_LT(task_clock(p, *a), 10'000'000);
  EXPECT_GT(task_clock(p, *b), 30'000'000);  // its 2 ms and the 40 ms before it
  EXPECT_GT(task_clock(p, *gap), 9'000'000);
  EXPECT_LT(task_clock(p, *gap), 35'000'000);  // not the 40 ms between the nodes
}

namespace {

// Waits until the process's other threads are idle: OpenBLAS's workers spin for ~0.1 s after
// the library starts them (longer on a loaded machine), and the comparison below is about the
// scope's accounting, not about when their spinning stops.
void wait_until_other_threads_idle() {
  for (int tries = 0; tries < 100; ++tries) {
    const std::int64_t process = process_cpu_ns(), thread = thread_cpu_ns();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if ((process_cpu_ns() - process) - (thread_cpu_ns() - thread) < 500'000) return;
  }
}

}  // namespace

TEST(ProfSession, TaskClockOfAScopeMatchesTheProcessCpuTime) {
  wait_until_other_threads_idle();
  Session s(software_events());
  s.begin(ScopeLabel::region("spin"));
  const std::int64_t start = process_cpu_ns();
  spin_cpu_ns(30'000'000);
  const std::int64_t cpu = process_cpu_ns() - start;
  s.end();
  const Profile p = s.finish();
  const double counted = static_cast<double>(p.total(p.records[0], 0));
  // CLOCK_PROCESS_CPUTIME_ID is an independent clock of the same thing: the CPU time of every
  // thread of the process (this binary links OpenBLAS, whose idle workers spin for a while, so
  // this thread's time alone would not do). The scope also holds the two clock reads.
  EXPECT_NEAR(counted, static_cast<double>(cpu), 0.05 * static_cast<double>(cpu) + 1e6);
  EXPECT_GE(cpu, 30'000'000);
}

TEST(ProfSession, CountsThreadsStartedInsideTheScope) {
  Session s(software_events());
  s.begin(ScopeLabel::region("threads"));
  std::atomic<std::int64_t> worker_cpu{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 2; ++t)
    workers.emplace_back([&] {
      const std::int64_t start = thread_cpu_ns();
      spin_cpu_ns(20'000'000);
      worker_cpu += thread_cpu_ns() - start;
    });
  for (auto& w : workers) w.join();
  s.end();
  const Profile p = s.finish();
  EXPECT_GE(static_cast<double>(p.total(p.records[0], 0)), 0.95 * static_cast<double>(worker_cpu));
}

TEST(ProfSession, CountsThreadsThatExistedBeforeTheSession) {
  std::mutex m;
  std::condition_variable cv;
  bool go = false, done = false;
  std::int64_t worker_cpu = 0;
  std::thread worker([&] {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return go; });
    lock.unlock();
    const std::int64_t start = thread_cpu_ns();
    spin_cpu_ns(25'000'000);
    lock.lock();
    worker_cpu = thread_cpu_ns() - start;
    done = true;
    cv.notify_all();
  });
  Session s(software_events());
  EXPECT_GE(s.counter_count(), 2u) << "one group set per existing thread";
  s.begin(ScopeLabel::region("pool"));
  {
    std::unique_lock lock(m);
    go = true;
    cv.notify_all();
    cv.wait(lock, [&] { return done; });
  }
  worker.join();  // the thread has ended before the scope does: its counts must remain
  s.end();
  const Profile p = s.finish();
  EXPECT_GE(static_cast<double>(p.total(p.records[0], 0)), 0.95 * static_cast<double>(worker_cpu));
}

// With compute_pool the pool's threads read their own counters at node boundaries; a node
// scope around work on every pool thread must still count all of it, and leave nothing of a
// later node in an earlier one.
TEST(ProfSession, ComputePoolThreadsReadTheirOwnCountersAndAllOfTheirWorkIsCounted) {
  telar::set_compute_threads(2);
  SessionOptions o = software_events();
  o.counting.compute_pool = true;
  Session s(o);
  EXPECT_GE(s.counter_count(), 2u * 3u) << "the pool was started and attached";
  std::array<std::int64_t, 2> first{}, second{};
  const auto work = [](std::array<std::int64_t, 2>& cpu, std::int64_t ns) {
#pragma omp parallel num_threads(2)
    {
      const std::int64_t start = thread_cpu_ns();
      spin_cpu_ns(ns);
      cpu[static_cast<std::size_t>(omp_get_thread_num())] = thread_cpu_ns() - start;
    }
  };
  s.begin(ScopeLabel::node("first", Pass::Forward));
  work(first, 20'000'000);
  s.end();
  s.begin(ScopeLabel::node("second", Pass::Forward));
  work(second, 5'000'000);
  s.end();
  const Profile p = s.finish();
  ASSERT_EQ(p.records.size(), 2u);
  const double counted_first = static_cast<double>(p.total(p.records[0], 0));
  const double counted_second = static_cast<double>(p.total(p.records[1], 0));
  const double worked_first = static_cast<double>(first[0] + first[1]);
  const double worked_second = static_cast<double>(second[0] + second[1]);
  EXPECT_GE(counted_first, 0.95 * worked_first);
  EXPECT_GE(counted_second, 0.95 * worked_second);
  // The 20 ms of the first scope stay in it: what the second counts beyond its own work is the
  // pool's spin-wait after its region (far less than 4x its work) and no part of the first.
  EXPECT_LT(counted_second, counted_first);
  telar::set_compute_threads(0);
}

TEST(ProfSession, UnrecordedKindsKeepPathsAndAttachChildrenToTheNearestRecordedScope) {
  Session s(software_events(ScopeSet::parse("run,batch")));
  simulate_training(s, 2, 2);
  const Profile p = s.finish();
  EXPECT_TRUE(p.of_kind(ScopeKind::Epoch).empty());
  EXPECT_TRUE(p.of_kind(ScopeKind::Node).empty());
  const ScopeRecord* batch = find(p, "run/epoch[1]/batch[1]");
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(batch->epoch, 1);
  EXPECT_EQ(p.records[static_cast<std::size_t>(batch->parent)].path, "run");
  EXPECT_EQ(p.of_kind(ScopeKind::Batch).size(), 4u + 4u);  // train and eval batches
}

TEST(ProfSession, MisnestedOrUnmatchedEndsAreErrors) {
  Session s(software_events());
  EXPECT_THROW(s.end(), telar::Error);
  s.begin(ScopeLabel::epoch(0));
  try {
    s.end(ScopeKind::Batch);
    FAIL() << "end(batch) inside an epoch must throw";
  } catch (const telar::Error& e) {
    EXPECT_NE(std::string(e.what()).find("epoch"), std::string::npos) << e.what();
  }
  s.end(ScopeKind::Epoch);
  EXPECT_EQ(s.open_scopes(), 0u);
}

TEST(ProfSession, FinishClosesOpenScopesAndEndsTheSession) {
  Session s(software_events());
  s.begin(ScopeLabel::run());
  s.begin(ScopeLabel::epoch(0));
  const Profile p = s.finish();
  ASSERT_EQ(p.records.size(), 3u);  // run, epoch, run's gap
  EXPECT_EQ(p.records[1].path, "run/epoch[0]");
  EXPECT_THROW(s.begin(ScopeLabel::run()), telar::Error);
}

TEST(ProfScope, RaiiScopesUseTheGivenOrCurrentSessionAndDoNothingWithout) {
  { Scope nothing(ScopeLabel::run()); }  // no current session: a no-op
  Scope none(static_cast<Session*>(nullptr), ScopeLabel::run());
  Session s(software_events());
  s.make_current();
  EXPECT_EQ(Session::current(), &s);
  {
    Scope run(ScopeLabel::run());
    Scope node(ScopeLabel::node("conv2", Pass::Forward));
  }
  const Profile p = s.finish();
  EXPECT_EQ(Session::current(), nullptr);
  ASSERT_GE(p.records.size(), 2u);
  EXPECT_EQ(p.records[1].path, "run/node[conv2].fwd");
}

TEST(ProfSession, HardwareEventsThatCannotBeCountedHereAreLeftOutNotFatal) {
  SessionOptions o;
  o.events = {"task-clock", "cycles", "instructions"};
  Session s(o);
  s.begin(ScopeLabel::run());
  spin_cpu_ns(5'000'000);
  s.end();
  const Profile p = s.finish();
  EXPECT_TRUE(p.events[0].available);
  EXPECT_GT(p.total(p.records[0], 0), 0);
  for (std::size_t e = 1; e < 3; ++e) {
    if (p.events[e].available) {
      EXPECT_GT(p.total(p.records[0], e), 0) << p.events[e].name;
    } else {
      EXPECT_NE(p.events[e].unavailable.find("PMU"), std::string::npos) << p.events[e].unavailable;
    }
  }
}

TEST(ProfSession, PerCpuModeCountsTheListedCpus) {
  if (!has_perf_privilege({}) && read_paranoid({}) > 0)
    GTEST_SKIP() << "per-CPU counting needs kernel.perf_event_paranoid <= 0 or CAP_PERFMON";
  SessionOptions o = software_events();
  o.events = {"cpu-clock"};
  o.counting.mode = CountingMode::PerCpu;
  o.counting.cpus = {0};
  Session s(o);
  s.begin(ScopeLabel::run());
  const std::int64_t start = telar::now_ns();
  // 100 ms: the counters and the wall clock are read one after the other, and a thread preempted
  // between the two reads (a loaded machine) shifts them apart by a time slice, a few ms.
  while (telar::now_ns() - start < 100'000'000) {
  }
  s.end();
  const Profile p = s.finish();
  ASSERT_EQ(p.cpus, std::vector<int>{0});
  // cpu-clock on one CPU runs at wall-clock rate whether the CPU is busy or idle.
  EXPECT_NEAR(static_cast<double>(p.total(p.records[0], 0)),
              static_cast<double>(p.records[0].wall_ns),
              0.05 * static_cast<double>(p.records[0].wall_ns));
}

TEST(ProfTrainingProfiler, CallbackHooksMapOneToOneOntoScopes) {
  TrainingProfiler profiler(software_events());
  profiler.on_train_begin();
  for (int e = 0; e < 2; ++e) {
    profiler.on_epoch_begin(e);
    for (int b = 0; b < 2; ++b) {
      profiler.on_batch_begin(b);
      for (const auto& n : kNodes) {
        profiler.on_node_begin(n, false);
        small_matmul(16, 1);
        profiler.on_node_end();
      }
      for (auto it = kNodes.rbegin(); it != kNodes.rend(); ++it) {
        profiler.on_node_begin(*it, true);
        small_matmul(16, 2);
        profiler.on_node_end();
      }
      profiler.on_batch_end();
    }
    profiler.on_eval_begin();
    profiler.on_batch_begin(0);
    profiler.on_batch_end();
    profiler.on_eval_end();
    profiler.on_epoch_end();
  }
  EXPECT_THROW(profiler.on_epoch_end(), telar::Error) << "the run, not an epoch, is open";
  profiler.on_train_end();
  const Profile p = profiler.finish();
  EXPECT_NE(find(p, "run/epoch[1]/batch[1]/node[fc2].bwd"), nullptr);
  EXPECT_NE(find(p, "run/epoch[0]/eval/batch[0]"), nullptr);
  EXPECT_EQ(p.of_kind(ScopeKind::Node).size(), 2u * 2u * 6u);
}

TEST(ProfSession, EventsThatWouldOnlyReadZeroInThisModeAreReportedNotCounted) {
  SessionOptions o;
  o.events = {"task-clock", "context-switches"};
  o.counting.domain = Domain::User;
  Session user_only(o);
  EXPECT_TRUE(user_only.events()[0].unavailable.empty());
  EXPECT_NE(user_only.events()[1].unavailable.find("--domain all"), std::string::npos);
  if (!has_perf_privilege({}) && read_paranoid({}) > 0) return;
  o.counting.mode = CountingMode::PerCpu;
  o.counting.cpus = {0};
  o.counting.domain = Domain::All;
  Session per_cpu(o);
  EXPECT_NE(per_cpu.events()[0].unavailable.find("cpu-clock"), std::string::npos);
}
