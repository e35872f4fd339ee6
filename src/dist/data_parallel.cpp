#include "dist/data_parallel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <optional>

#include "core/clock.hpp"
#include "core/interrupt.hpp"
#include "core/log.hpp"
#include "core/rng.hpp"
#include "core/threads.hpp"
#include "train/trainer.hpp"

namespace telar::dist {

namespace {

std::unique_ptr<backend::Executable> compile_worker(const WorkerSpec& worker, const graph::Graph& g,
                                                    graph::ParameterSet& params,
                                                    std::uint64_t seed, int rank) {
  auto exe = backend::compile(worker.device, g, params,
                              {mix64(seed ^ (0x776f726b6572ULL + static_cast<std::uint64_t>(rank)))});
  if (worker.handicap.any())
    exe = std::make_unique<HandicappedExecutable>(std::move(exe), worker.handicap);
  return exe;
}

std::string join_shares(const std::vector<double>& v, const char* format) {
  std::string s;
  for (double x : v) s += (s.empty() ? "" : "/") + fmt::format(fmt::runtime(format), x);
  return s;
}

}  // namespace

DataParallelWorker::DataParallelWorker(Communicator& comm, const WorkerSpec& worker,
                                       const graph::Graph& graph, graph::ParameterSet& params,
                                       DataParallelOptions options, std::uint64_t seed)
    : queue_(comm), worker_(worker), graph_(graph), params_(params), options_(std::move(options)) {
  // This worker's thread runs its OpenMP loops (a GPU worker's optimizer step, a cpu worker's
  // kernels) on its own share of the cores.
  if (worker.host_threads > 0) set_compute_threads(worker.host_threads);
  replica_ = std::make_unique<ReplicaExecutable>(compile_worker(worker, graph, params, seed, comm.rank()),
                                                 params, queue_, options_.replica);
  shares_ = options_.balance.initial_shares(comm.size());
}

DataParallelWorker::~DataParallelWorker() = default;

train::BatchSource& DataParallelWorker::set_train_data(const train::Dataset& data,
                                                       std::vector<std::int64_t> indices,
                                                       std::int64_t global_batch,
                                                       std::uint64_t seed) {
  require(global_batch >= size(),
          "--batch-size {} is the global batch; it must give each of the {} workers at least "
          "one sample",
          global_batch, size());
  train_ = std::make_unique<ShardedTrainSource>(data, std::move(indices), global_batch,
                                                options_.shard, seed, rank(), shares_);
  return *train_;
}

train::BatchSource& DataParallelWorker::add_eval_data(const train::Dataset& data,
                                                      std::vector<std::int64_t> indices,
                                                      std::int64_t batch) {
  evals_.push_back(std::make_unique<ShardedEvalSource>(data, std::move(indices), batch, rank(), shares_));
  return *evals_.back();
}

void DataParallelWorker::guard(const std::function<void()>& work) {
  run_guarded(queue_.comm(), member_name(queue_.comm(), worker_.text), work);
}

std::string member_name(const Communicator& comm, const std::string& device) {
  return fmt::format("{} {} ({})", comm.kind() == "mpi" ? "rank" : "worker", comm.rank(), device);
}

void run_guarded(Communicator& comm, const std::string& who, const std::function<void()>& work) {
  try {
    work();
  } catch (const GroupAborted&) {
    throw;  // another member failed first and ended the group
  } catch (const train::NonFiniteLoss&) {
    throw;  // every member stops at the same step
  } catch (const Interrupted&) {
    throw;  // asked to stop: every member stops after the same batch (Trainer)
  } catch (const std::exception& e) {
    const std::string what = e.what();
    // An inner guard has already ended the group with the same words.
    comm.abort(what.rfind(who + " failed: ", 0) == 0 ? what : fmt::format("{} failed: {}", who, what));
    throw;
  }
}

void DataParallelWorker::apply_shares(std::vector<double> shares) {
  shares_ = std::move(shares);
  if (train_) train_->set_shares(shares_);
  for (auto& e : evals_) e->set_shares(shares_);
}

void DataParallelWorker::broadcast_parameters() {
  std::vector<graph::ValueId> ids = params_.ids();
  std::size_t bytes = 0;
  for (graph::ValueId id : ids) bytes += params_.at(id).nbytes();
  std::vector<std::byte> flat(bytes);
  std::size_t offset = 0;
  for (graph::ValueId id : ids) {
    const Tensor& t = params_.at(id);
    std::memcpy(flat.data() + offset, t.raw(), t.nbytes());
    offset += t.nbytes();
  }
  queue_.run([&] { queue_.comm().broadcast(flat, 0); });
  offset = 0;
  for (graph::ValueId id : ids) {
    Tensor& t = params_.at(id);
    std::memcpy(t.raw(), flat.data() + offset, t.nbytes());
    offset += t.nbytes();
  }
  replica_->parameters_updated();
}

// Forward and backward of `batch` on `exe` without an update (warm-up steps; they change
// BatchNorm running statistics, see BufferSnapshot). On the replica, the backward pass
// exchanges the gradients as in training, so every worker must take the same number.
void DataParallelWorker::untrained_step(backend::Executable& exe, const train::Batch& batch) {
  Tensor seed(Shape{});
  seed.f32()[0] = 1.0f;
  const std::vector<Tensor> inputs = {batch.images, batch.labels};
  const std::vector<Tensor> grads = {Tensor(), seed};
  exe.forward(inputs, backend::Mode::Train);
  exe.backward(grads);
}

DataParallelWorker::BufferSnapshot::BufferSnapshot(DataParallelWorker& w) : worker(w) {
  for (graph::ValueId b : w.graph_.buffers())
    if (w.params_.has(b)) saved.emplace_back(b, w.params_.at(b).clone());
}

DataParallelWorker::BufferSnapshot::~BufferSnapshot() {
  for (auto& [id, t] : saved) worker.params_.at(id).copy_from(t);
  worker.replica_->parameters_updated();
}

// One untimed step on this worker's first batch under the current shares, so the plans and
// primitives for its batch size exist before training is timed (a new size costs a plan, and
// a handicapped worker stretches that too).
void DataParallelWorker::prepare_plans() {
  const train::Batch& first = train_->batch(0, 0);
  if (first.size == 0) return;
  BufferSnapshot keep(*this);
  untrained_step(replica_->local(), first);
}

std::vector<double> DataParallelWorker::measure_throughputs() {
  Stopwatch total;
  std::optional<BufferSnapshot> keep(std::in_place, *this);
  // One round: every worker steps on its first batch under the current shares (its usual
  // size, real samples), gradients exchanged as in training but no update: one untimed step
  // (plans, caches), then at least warmup_steps steps, for as long as rank 0 says (at least
  // warmup_seconds), all together. Each worker's figure is its samples over its compute time
  // (forward to the end of its own backward pass, not the wait for the others: the measure
  // dynamic takes every epoch), so it sees what a step of training sees: the other workers
  // and the gradient exchange competing for the cores and memory. Every worker's samples/s
  // (0: a worker with nothing to time).
  auto round = [&] {
    const train::Batch& first = train_->batch(0, 0);
    untrained_step(*replica_, first);
    replica_->take_compute_stats();
    Stopwatch sw;
    for (std::int64_t steps = 1;; ++steps) {
      untrained_step(*replica_, first);
      double more[1] = {leader() && (steps < options_.warmup_steps ||
                                     sw.seconds() < options_.warmup_seconds)
                            ? 1.0
                            : 0.0};
      sum(more);
      if (more[0] == 0.0) break;
    }
    const auto [seconds, samples] = replica_->take_compute_stats();
    std::vector<double> thr(static_cast<std::size_t>(size()), 0.0);
    if (seconds > 0 && samples > 0)
      thr[static_cast<std::size_t>(rank())] = static_cast<double>(samples) / seconds;
    sum(thr);
    return thr;
  };
  // Round 1 at equal parts; then again at the parts the last round suggests, since a worker's
  // speed per sample depends on its batch size (small batches use a device less well): a
  // fixed-point iteration that stops when the parts move by less than a percentage point (at
  // most kMaxRounds rounds; every rank sees the same figures, so all stop together).
  constexpr int kMaxRounds = 4;
  std::vector<double> thr = round();
  bool complete = true;
  for (double t : thr) complete = complete && t > 0;
  for (int r = 1; complete && r < kMaxRounds; ++r) {
    const std::vector<double> before = shares_;
    apply_shares(normalize_shares(thr));
    double change = 0.0;
    for (std::size_t q = 0; q < before.size() && q < shares_.size(); ++q)
      change = std::max(change, std::abs(shares_[q] - before[q]));
    if (r > 1 && change < 0.01) break;
    const std::vector<double> again = round();
    for (std::size_t q = 0; q < thr.size(); ++q)
      if (again[q] > 0) thr[q] = again[q];
  }
  keep.reset();
  if (complete) {
    apply_shares(normalize_shares(thr));
    prepare_plans();
  }
  warmup_seconds_ = total.seconds();
  if (!complete) {
    if (leader())
      log::warn("balance {}: a worker had no warm-up data to time; shares stay equal",
                options_.balance.text);
    return std::vector<double>(static_cast<std::size_t>(size()), 1.0);
  }
  return thr;
}

void DataParallelWorker::start(const std::string& resumed_state) {
  require(train_ != nullptr, "internal: set_train_data before start");
  broadcast_parameters();
  if (!resumed_state.empty()) {
    const auto j = nlohmann::json::parse(resumed_state, nullptr, false);
    const auto shares = j.is_object() ? j.value("shares", std::vector<double>{}) : std::vector<double>{};
    require(static_cast<int>(shares.size()) == size(),
            "--resume: the checkpoint was written by {} workers, this run has {}; resume with "
            "the same number of workers",
            shares.size(), size());
    throughputs_ = j.value("throughputs", std::vector<double>{});
    apply_shares(shares);
    return;
  }
  if (options_.balance.measured()) {
    throughputs_ = measure_throughputs();
    apply_shares(normalize_shares(throughputs_));
    if (leader())
      log::info("balance {}: measured {} samples/s in {:.1f} s of warm-up; shares {}",
                options_.balance.text, join_shares(throughputs_, "{:.0f}"), warmup_seconds_,
                join_shares(shares_, "{:.3f}"));
  } else {
    apply_shares(shares_);
  }
  epoch_clock_.reset();
}

void DataParallelWorker::sum(std::span<double> values) {
  queue_.run([&] { queue_.comm().all_reduce_sum(values); });
}

void DataParallelWorker::end_epoch(int epoch) {
  const double epoch_seconds = epoch_clock_.seconds();
  const auto [seconds, samples] = replica_->take_compute_stats();
  {
    // Every worker's compute time (the rest of a step is exchange and waiting), for run.json,
    // and the samples the group trained.
    const auto n = static_cast<std::size_t>(size()), r = static_cast<std::size_t>(rank());
    std::vector<double> all(2 * n, 0.0);
    all[r] = seconds;
    all[n + r] = static_cast<double>(samples);
    sum(all);
    compute_seconds_.resize(n, 0.0);
    double group_samples = 0;
    for (std::size_t q = 0; q < n; ++q) {
      compute_seconds_[q] += all[q];
      group_samples += all[n + q];
    }
    // Once, after the first epoch this process trains: is the group slower than its fastest
    // worker would be alone?
    if (!speed_checked_ && leader() && epoch_seconds > 0) {
      const std::string warning =
          slower_than_alone_warning(group_samples / epoch_seconds, throughputs_);
      if (!warning.empty()) log::warn("{}", warning);
    }
    speed_checked_ = true;
  }
  if (options_.balance.kind == Balance::Kind::Dynamic) {
    // [throughput, measured?] per worker; a worker that trained nothing keeps its estimate.
    std::vector<double> v(2 * static_cast<std::size_t>(size()), 0.0);
    if (samples > 0 && seconds > 0) {
      v[2 * static_cast<std::size_t>(rank())] = static_cast<double>(samples) / seconds;
      v[2 * static_cast<std::size_t>(rank()) + 1] = 1.0;
    }
    sum(v);
    std::vector<double> thr = throughputs_;
    thr.resize(static_cast<std::size_t>(size()), 0.0);
    for (std::size_t q = 0; q < thr.size(); ++q)
      if (v[2 * q + 1] > 0) thr[q] = v[2 * q];
    double positive = 0;
    for (double t : thr) positive += t > 0;
    if (positive == static_cast<double>(size())) {
      throughputs_ = thr;
      std::vector<double> next = normalize_shares(thr);
      double change = 0;
      for (std::size_t q = 0; q < next.size(); ++q) change = std::max(change, std::abs(next[q] - shares_[q]));
      // Small changes are noise: keeping the split keeps the batch shapes (and plans) stable.
      if (change > 0.01) {
        apply_shares(std::move(next));
        prepare_plans();
        rebalances_.push_back(fmt::format("after epoch {}: {}", epoch + 1, join_shares(shares_, "{:.3f}")));
        if (leader())
          log::info("balance dynamic: measured {} samples/s in epoch {}; shares now {}",
                    join_shares(throughputs_, "{:.0f}"), epoch + 1, join_shares(shares_, "{:.3f}"));
      }
    }
  }
  if (options_.check_replicas) check_replicas(epoch);
}

void DataParallelWorker::check_replicas(int epoch) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over every parameter and buffer byte
  for (graph::ValueId id : params_.ids()) {
    const Tensor& t = params_.at(id);
    const auto* p = static_cast<const unsigned char*>(t.raw());
    for (std::size_t i = 0; i < t.nbytes(); ++i) h = (h ^ p[i]) * 1099511628211ULL;
  }
  std::vector<double> v(2 * static_cast<std::size_t>(size()), 0.0);
  v[2 * static_cast<std::size_t>(rank())] = static_cast<double>(h >> 32);
  v[2 * static_cast<std::size_t>(rank()) + 1] = static_cast<double>(h & 0xffffffffULL);
  sum(v);
  for (int q = 1; q < size(); ++q)
    if (v[2 * static_cast<std::size_t>(q)] != v[0] || v[2 * static_cast<std::size_t>(q) + 1] != v[1])
      fail("the workers' parameters differ after epoch {} (worker {} from worker 0): the "
           "replicas diverged; this is a bug in the gradient exchange, please report it",
           epoch + 1, q);
}

std::string DataParallelWorker::state() const {
  return nlohmann::json{{"shares", shares_}, {"throughputs", throughputs_}}.dump();
}

nlohmann::json DataParallelWorker::describe() const {
  nlohmann::json j = {{"workers", size()},
                      {"communicator", queue_.comm().kind()},
                      {"balance", options_.balance.text},
                      {"shard", shard_mode_name(options_.shard)},
                      {"shares", shares_},
                      {"buckets", replica_->bucket_count()},
                      {"bucket_bytes", options_.replica.bucket_bytes},
                      {"overlap", options_.replica.overlap},
                      {"bn_buffers", options_.replica.buffers == BufferSync::Average ? "average" : "broadcast"}};
  if (!throughputs_.empty()) j["measured_samples_per_s"] = throughputs_;
  if (warmup_seconds_ > 0) j["warmup_seconds"] = warmup_seconds_;
  if (!rebalances_.empty()) j["rebalances"] = rebalances_;
  if (!compute_seconds_.empty()) j["compute_seconds"] = compute_seconds_;
  return j;
}

}  // namespace telar::dist
