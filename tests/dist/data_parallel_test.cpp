// DDP semantics: workers with unequal parts of each global batch (one of them sometimes with
// nothing) train exactly the model one worker trains on the same global batches, to
// floating-point tolerance: same losses, same parameters. Also: the initial parameters come
// from rank 0; a failing worker ends every worker's training and is named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/backend.hpp"
#include "core/threads.hpp"
#include "dist/data_parallel.hpp"
#include "dist/worker_threads.hpp"
#include "graph/builder.hpp"
#include "graph/loss.hpp"
#include "graph/parameters.hpp"
#include "train/data/data_loader.hpp"
#include "train/data/synthetic.hpp"
#include "train/trainer.hpp"

using namespace telar;

namespace {

// conv -> relu -> pool -> linear: every gradient path of a CNN, no dropout, no BatchNorm (whose
// batch statistics are per worker by design).
graph::Graph small_cnn() {
  graph::GraphBuilder b("small_cnn");
  graph::ValueId x = b.input("x", {1, 8, 8});
  x = b.relu(b.conv2d(x, 4, 3, 1, 1, 1, true, "conv"), "relu");
  x = b.maxpool2d(x, 2, 2, 0, "pool");
  x = b.flatten(x, "flatten");
  x = b.relu(b.linear(x, 16, "fc1"), "relu2");
  x = b.linear(x, 4, "fc2");
  b.output(x);
  return graph::with_loss(b.finish(), graph::LossKind::CrossEntropy);
}

train::Dataset data() {
  train::SyntheticSpec s;
  s.samples = 61;  // global batches of 16: 16, 16, 16, 13
  s.sample_shape = {1, 8, 8};
  s.num_classes = 4;
  s.seed = 3;
  return train::make_synthetic_classification(s);
}

std::vector<std::int64_t> all(std::int64_t n) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(i);
  return v;
}

train::OptimizerOptions sgd_momentum() {
  train::OptimizerOptions o;
  o.momentum = 0.9f;
  return o;
}

struct Result {
  std::vector<double> epoch_loss;
  graph::ParameterSet params;
};

class LossLog : public train::Callback {
 public:
  void on_epoch_end(const train::TrainState& s) override { losses.push_back(s.train.loss); }
  std::vector<double> losses;
};

Result train_single(const graph::Graph& g, int epochs) {
  Result r;
  r.params = graph::ParameterSet::initialize(g, 11);
  auto exe = backend::compile(backend::parse_backend_spec("cpu:threads=1"), g, r.params, {0});
  auto opt = train::make_optimizer(sgd_momentum());
  train::Trainer trainer(*exe, r.params, *opt, train::LrSchedule::parse("constant", 0.1),
                         {epochs, 0});
  LossLog log;
  trainer.add_callback(&log);
  train::DataLoader loader(data(), all(61), {16, true, false, 7});
  trainer.fit(loader, nullptr);
  r.epoch_loss = log.losses;
  return r;
}

Result train_parallel(const graph::Graph& g, int epochs, const std::string& balance,
                      dist::ShardMode shard, int workers) {
  Result r;
  std::mutex m;
  dist::run_worker_threads(workers, [&](dist::Communicator& comm) {
    // Rank 0's initialisation must win: the others start from other values.
    graph::ParameterSet params = graph::ParameterSet::initialize(g, comm.rank() == 0 ? 11 : 99);
    dist::DataParallelOptions o;
    o.balance = dist::Balance::parse(balance);
    o.shard = shard;
    o.replica.bucket_bytes = 256;  // several buckets, overlapped with the backward pass
    dist::DataParallelWorker worker(comm, dist::parse_workers("cpu:threads=1").workers[0], g,
                                    params, o, 0);
    auto& train_data = worker.set_train_data(data(), all(61), 16, 7);
    auto opt = train::make_optimizer(sgd_momentum());
    train::Trainer trainer(worker.executable(), params, *opt,
                           train::LrSchedule::parse("constant", 0.1), {epochs, 0});
    trainer.set_group(&worker);
    LossLog log;
    trainer.add_callback(&log);
    worker.guard([&] {
      worker.start("");
      trainer.fit(train_data, nullptr);
    });
    if (comm.rank() == 0) {
      std::lock_guard lock(m);
      r.epoch_loss = log.losses;
      r.params = params;
      EXPECT_GT(worker.replica().bucket_count(), 2u);
    }
  });
  return r;
}

void expect_same(const graph::Graph& g, const Result& a, const Result& b, double tol) {
  ASSERT_EQ(a.epoch_loss.size(), b.epoch_loss.size());
  for (std::size_t e = 0; e < a.epoch_loss.size(); ++e)
    EXPECT_NEAR(a.epoch_loss[e], b.epoch_loss[e], tol * std::abs(a.epoch_loss[e])) << "epoch " << e;
  for (graph::ValueId id : g.parameters()) {
    const Tensor& x = a.params.at(id);
    const Tensor& y = b.params.at(id);
    double worst = 0, scale = 0;
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      worst = std::max(worst, static_cast<double>(std::abs(x.f32()[i] - y.f32()[i])));
      scale = std::max(scale, static_cast<double>(std::abs(x.f32()[i])));
    }
    EXPECT_LE(worst, tol * std::max(scale, 1.0)) << g.value(id).name;
  }
}

}  // namespace

TEST(DataParallel, UnequalSharesGiveTheSingleWorkerUpdate) {
  const graph::Graph g = small_cnn();
  const Result single = train_single(g, 3);
  // 16 = 11 + 5 per global batch, the last (13) = 9 + 4.
  const Result two = train_parallel(g, 3, "weights:7/3", dist::ShardMode::Interleaved, 2);
  expect_same(g, single, two, 2e-5);
  // The loss must actually have moved, or the comparison proves little.
  EXPECT_LT(single.epoch_loss.back(), single.epoch_loss.front() * 0.9);
}

TEST(DataParallel, AWorkerWithNothingToDoContributesWeightZero) {
  const graph::Graph g = small_cnn();
  const Result single = train_single(g, 2);
  // Shares 0.6/0.35/0.05 of 16: 10/5/1 (rounded); of the last 13: 8/4/1. Weight 0.01 gives
  // worker 2 a share that rounds to zero: empty batches every step.
  const Result three = train_parallel(g, 2, "weights:60/39/1", dist::ShardMode::Interleaved, 3);
  expect_same(g, single, three, 2e-5);
}

TEST(DataParallel, AGroupOfOneTrainsExactlyTheLoneModel) {
  const graph::Graph g = small_cnn();
  const Result single = train_single(g, 2);
  const Result one = train_parallel(g, 2, "equal", dist::ShardMode::Interleaved, 1);
  // Bit for bit: a weighted mean over one member (g * 13 / 13 on the last batch) would round.
  expect_same(g, single, one, 0.0);
}

TEST(DataParallel, ContiguousShardsTrainAndStayInStep) {
  const graph::Graph g = small_cnn();
  // Other batches than a single worker's, so no equality; the replicas must agree (checked
  // after every epoch inside) and learn.
  const Result two = train_parallel(g, 3, "equal", dist::ShardMode::Contiguous, 2);
  ASSERT_EQ(two.epoch_loss.size(), 3u);
  EXPECT_LT(two.epoch_loss.back(), two.epoch_loss.front());
}

// Two thread workers on `g` under --balance auto, worker 1 slowed `slowdown` times, each
// starting from the parameters of seed `seed(rank)`; after start() (the warm-up),
// `check(rank, worker, params)` runs on each worker, one at a time.
template <typename Seed, typename Check>
void start_auto_pair(const graph::Graph& g, double slowdown, double warmup_seconds, Seed seed,
                     Check check) {
  std::mutex m;
  dist::run_worker_threads(2, [&](dist::Communicator& comm) {
    graph::ParameterSet params = graph::ParameterSet::initialize(g, seed(comm.rank()));
    dist::DataParallelOptions o;
    o.balance = dist::Balance::parse("auto");
    o.warmup_seconds = warmup_seconds;
    const std::string spec =
        comm.rank() == 1 ? fmt::format("cpu:threads=1:slowdown={}", slowdown) : "cpu:threads=1";
    dist::DataParallelWorker worker(comm, dist::parse_workers(spec).workers[0], g, params, o, 0);
    worker.set_train_data(data(), all(61), 16, 7);
    worker.start("");
    std::lock_guard lock(m);
    check(comm.rank(), worker, params);
  });
}

TEST(DataParallel, AutoBalanceMeasuresASlowedWorker) {
  const graph::Graph g = small_cnn();
  std::vector<double> shares;
  start_auto_pair(g, 8, 0.2, [](int) { return 1; },
                  [&](int rank, const dist::DataParallelWorker& worker, const graph::ParameterSet&) {
                    if (rank == 0) shares = worker.shares();
                  });
  ASSERT_EQ(shares.size(), 2u);
  // 8x slower: ideally 8/9 and 1/9. Timing noise moves it, but the order must hold clearly.
  EXPECT_GT(shares[0], 0.7);
  EXPECT_LT(shares[1], 0.3);
}

// The warm-up's steps exchange gradients as training does, but must leave the model as rank 0
// made it: parameters untouched, BatchNorm running statistics put back, on every worker.
TEST(DataParallel, AutoBalanceWarmUpLeavesTheModelAsRankZeroMadeIt) {
  graph::GraphBuilder b("bn_cnn");
  graph::ValueId x = b.input("x", {1, 8, 8});
  x = b.relu(b.batchnorm2d(b.conv2d(x, 4, 3, 1, 1, 1, false, "conv"), "bn"), "relu");
  x = b.flatten(x, "flatten");
  b.output(b.linear(x, 4, "fc"));
  const graph::Graph g = graph::with_loss(b.finish(), graph::LossKind::CrossEntropy);
  const graph::ParameterSet initial = graph::ParameterSet::initialize(g, 1);
  std::vector<std::string> mismatches;
  // Rank 1 starts from other values: the broadcast, not the seed, must make them equal.
  start_auto_pair(g, 2, 0.05, [](int rank) { return rank == 0 ? 1 : 99; },
                  [&](int rank, const dist::DataParallelWorker&, const graph::ParameterSet& params) {
                    for (graph::ValueId id : initial.ids()) {
                      const Tensor& want = initial.at(id);
                      const Tensor& got = params.at(id);
                      if (std::memcmp(want.raw(), got.raw(), want.nbytes()) != 0)
                        mismatches.push_back(fmt::format("worker {}: {}", rank, g.value(id).name));
                    }
                  });
  EXPECT_TRUE(mismatches.empty()) << fmt::format("{}", fmt::join(mismatches, ", "));
}

TEST(DataParallel, AFailingWorkerStopsEveryoneAndIsNamed) {
  const graph::Graph g = small_cnn();
  try {
    dist::run_worker_threads(2, [&](dist::Communicator& comm) {
      graph::ParameterSet params = graph::ParameterSet::initialize(g, 1);
      const std::string spec = comm.rank() == 1 ? "cpu:threads=1:fail_at_step=5" : "cpu:threads=1";
      dist::DataParallelWorker worker(comm, dist::parse_workers(spec).workers[0], g, params, {}, 0);
      auto& train_data = worker.set_train_data(data(), all(61), 16, 7);
      auto opt = train::make_optimizer({});
      train::Trainer trainer(worker.executable(), params, *opt,
                             train::LrSchedule::parse("constant", 0.1), {10, 0});
      trainer.set_group(&worker);
      worker.guard([&] {
        worker.start("");
        trainer.fit(train_data, nullptr);
      });
    });
    FAIL() << "no exception";
  } catch (const dist::WorkerFailed& e) {
    EXPECT_EQ(e.rank, 1);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("worker 1 (cpu:threads=1:fail_at_step=5) failed: ", 0), 0u) << what;
    EXPECT_NE(what.find("fails at step 5 on purpose"), std::string::npos) << what;
  }
}

TEST(WorkerSpec, ParsesListsAndKnobs) {
  auto l = dist::parse_workers("cpu:threads=1,cpu:threads=2:slowdown=4");
  ASSERT_EQ(l.workers.size(), 2u);
  EXPECT_FALSE(l.mpi);
  EXPECT_EQ(l.workers[1].handicap.slowdown, 4.0);
  EXPECT_EQ(l.workers[1].device.text, "cpu:threads=2");
  auto m = dist::parse_workers("mpi");
  EXPECT_TRUE(m.mpi);
  EXPECT_EQ(m.for_rank(3, 4).device.kind, "cpu");
  auto p = dist::parse_workers("mpi:cpu:threads=1,cpu:threads=1:slowdown=2");
  EXPECT_EQ(p.for_rank(1, 2).handicap.slowdown, 2.0);
  EXPECT_THROW(p.for_rank(0, 3), Error);
  EXPECT_THROW(dist::parse_workers("cpu,,cpu"), Error);
  EXPECT_THROW(dist::parse_workers("cpu:slowdown=0.5"), Error);
  EXPECT_THROW(dist::parse_workers("gpu"), Error);
  EXPECT_THROW(dist::parse_workers("cpu,mpi"), Error);
}

// Workers sharing a machine split its cores: explicit threads=N stay, the other workers (a GPU
// worker's threads run its host side) share the rest equally.
TEST(WorkerSpec, AssignsThreadsSoWorkersDoNotOversubscribeTheCores) {
  const int cores = telar::hardware_threads();
  auto l = dist::parse_workers("cuda:0,cpu,cpu:threads=1,cpu");
  dist::assign_threads(l.workers);
  const int share = std::max(1, (cores - 1) / 3);
  EXPECT_EQ(l.workers[0].host_threads, share);
  EXPECT_EQ(l.workers[0].device.text, "cuda:0");
  EXPECT_EQ(l.workers[1].host_threads, share);
  EXPECT_EQ(l.workers[1].device.text, "cpu:threads=" + std::to_string(share));
  EXPECT_EQ(l.workers[2].host_threads, 1);
  EXPECT_EQ(l.workers[3].host_threads, share);

  auto two = dist::parse_workers("cpu,cpu");
  dist::assign_threads(two.workers);
  EXPECT_EQ(two.workers[0].host_threads, std::max(1, cores / 2));
  EXPECT_EQ(two.workers[1].device.text, "cpu:threads=" + std::to_string(std::max(1, cores / 2)));
}
