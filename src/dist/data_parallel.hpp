#pragma once
// One worker of a data-parallel run, as a Trainer sees it: an executable whose backward pass
// leaves the group's gradient (ReplicaExecutable), batch sources that serve this worker's part
// of each global batch and of each evaluation set (shards.hpp), and the ReplicaGroup the
// Trainer calls to sum figures and to end epochs. Built the same way on every worker.
//
//   DataParallelWorker worker(comm, spec, graph, params, options, seed);
//   auto& train = worker.set_train_data(data, indices, global_batch, seed);
//   auto& test = worker.add_eval_data(test_data, all, batch);
//   Trainer trainer(worker.executable(), params, ...); trainer.set_group(&worker);
//   worker.guard([&] { worker.start(resumed_state); trainer.fit(train, &test); });
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/clock.hpp"
#include "dist/balance.hpp"
#include "dist/collective_queue.hpp"
#include "dist/replica_executable.hpp"
#include "dist/shards.hpp"
#include "dist/worker_spec.hpp"
#include "train/replica_group.hpp"

namespace telar::dist {

struct DataParallelOptions {
  Balance balance;
  ShardMode shard = ShardMode::Interleaved;
  ReplicaOptions replica;
  // The warm-up of auto/dynamic: the workers train together (gradients exchanged, no update)
  // for this long on rank 0's clock, at least warmup_steps timed steps (after one untimed), in
  // each round (up to four).
  double warmup_seconds = 1.0;
  int warmup_steps = 3;
  bool check_replicas = true;  // compare parameter checksums after every epoch
};

class DataParallelWorker final : public train::ReplicaGroup {
 public:
  // Compiles this worker's executable for `worker.device` over `params` (which must outlive
  // it). The compile seed differs per rank, so dropout masks differ between workers.
  DataParallelWorker(Communicator& comm, const WorkerSpec& worker, const graph::Graph& graph,
                     graph::ParameterSet& params, DataParallelOptions options,
                     std::uint64_t seed);
  ~DataParallelWorker() override;

  int rank() const { return queue_.rank(); }
  int size() const { return queue_.size(); }
  bool leader() const { return rank() == 0; }
  backend::Executable& executable() { return *replica_; }
  ReplicaExecutable& replica() { return *replica_; }

  // The training samples and the global batch size (every worker passes the same). The data
  // order follows `seed` as a DataLoader's with that seed would.
  train::BatchSource& set_train_data(const train::Dataset& data, std::vector<std::int64_t> indices,
                                     std::int64_t global_batch, std::uint64_t seed);
  // An evaluation set (validation or test), split between the workers by the shares.
  train::BatchSource& add_eval_data(const train::Dataset& data, std::vector<std::int64_t> indices,
                                    std::int64_t batch);

  // Before training, on every worker: rank 0's parameters and buffers everywhere, then the
  // shares: from `resumed_state` (a checkpoint's group state) if given, else from the balance
  // (auto and dynamic measure every worker's throughput now).
  void start(const std::string& resumed_state);

  // Runs `work`; if it throws, ends the group first (the others stop instead of waiting for
  // this worker; with MPI the job ends here) and rethrows.
  void guard(const std::function<void()>& work);

  void sum(std::span<double> values) override;
  void end_epoch(int epoch) override;
  std::string state() const override;

  const std::vector<double>& shares() const { return shares_; }
  const std::vector<double>& throughputs() const { return throughputs_; }
  double warmup_seconds() const { return warmup_seconds_; }
  // For run.json: communicator, balance, shard mode, shares, measured throughputs, buckets.
  nlohmann::json describe() const;

 private:
  std::vector<double> measure_throughputs();
  void prepare_plans();
  void untrained_step(backend::Executable& exe, const train::Batch& batch);
  // Saves the BatchNorm running statistics and puts them back when it goes out of scope.
  struct BufferSnapshot {
    explicit BufferSnapshot(DataParallelWorker& w);
    ~BufferSnapshot();
    BufferSnapshot(const BufferSnapshot&) = delete;
    BufferSnapshot& operator=(const BufferSnapshot&) = delete;
    DataParallelWorker& worker;
    std::vector<std::pair<graph::ValueId, Tensor>> saved;
  };
  void apply_shares(std::vector<double> shares);
  void broadcast_parameters();
  void check_replicas(int epoch);

  CollectiveQueue queue_;
  WorkerSpec worker_;
  const graph::Graph& graph_;
  graph::ParameterSet& params_;
  DataParallelOptions options_;
  std::unique_ptr<ReplicaExecutable> replica_;
  std::unique_ptr<ShardedTrainSource> train_;
  std::vector<std::unique_ptr<ShardedEvalSource>> evals_;
  std::vector<double> shares_;
  std::vector<double> throughputs_;
  double warmup_seconds_ = 0.0;
  std::vector<std::string> rebalances_;
  std::vector<double> compute_seconds_;  // per worker, all epochs so far (forward + backward)
  Stopwatch epoch_clock_;                 // from the end of start() to the first end_epoch()
  bool speed_checked_ = false;            // the first epoch's group throughput was compared
};

// How messages name a member: "worker 1 (cpu:threads=1)" (threads) or "rank 1 (cpu)" (MPI).
std::string member_name(const Communicator& comm, const std::string& device);

// Runs `work` as member `who` (e.g. "worker 1 (cpu:threads=1)") of the group of `comm`. If it
// throws, the group is ended first, so the other members stop instead of waiting for this
// one (with MPI the job ends here), and the error propagates. A non-finite loss is not ended
// this way: every member meets it at the same step and stops by itself.
void run_guarded(Communicator& comm, const std::string& who, const std::function<void()>& work);

}  // namespace telar::dist
