#pragma once
// Runs a DLRM model on a backend chosen by name. The model (configuration, full graph, tables)
// is backend-neutral; an Executor binds it to one way of running:
//   cpu[:threads=N|:ref]   the tables with their own storage and the fast EmbeddingBag kernels,
//                          the rest of the graph (bottom MLP, interaction, top MLP, loss)
//                          compiled on the CPU backend (oneDNN).
//   sim:CONFIG|HYBRID      values as `cpu` computes them; every forward pass also simulated on
//                          the accelerators the target names (src/dlrm/sim_executor.hpp).
// Every executor reports per-component figures grouped by dlrm::component_of: time, and with
// `sim:` the simulator's cycles, Global Buffer traffic and energy.
#include <array>
#include <memory>
#include <string>

#include "backend/backend.hpp"
#include "backend/executable.hpp"
#include "backend/sim/sim_backend.hpp"
#include "dlrm/config.hpp"
#include "dlrm/data.hpp"
#include "dlrm/embedding_table.hpp"
#include "dlrm/model.hpp"

namespace telar::dlrm {

// A DLRM: its architecture, its graph (the full variant, with EmbeddingBag nodes: what a
// simulator or a cost model walks) and its tables.
struct DlrmModel {
  DlrmModel(DlrmConfig config, StorageKind storage, std::uint64_t seed,
            const std::filesystem::path& mmap_dir = {});
  DlrmConfig config;
  graph::Graph graph;
  EmbeddingTables tables;
  std::uint64_t seed;
};

// Seconds spent per component (forward and backward together).
struct ComponentTimes {
  std::array<double, kComponents> seconds{};
  double& operator[](Component c) { return seconds[static_cast<std::size_t>(c)]; }
  double operator[](Component c) const { return seconds[static_cast<std::size_t>(c)]; }
};

// The simulator's figures for one component, summed over the forward passes simulated.
struct ComponentFigures {
  std::uint64_t cycles = 0, gb_reads = 0, gb_writes = 0, multiplications = 0;
  double energy = 0.0;
  std::int64_t calls = 0;  // simulator calls (0: the component ran on the host)
  void add(const ComponentFigures& o);
};

// What a `sim:` executor measured: per component and per graph node, summed over the forward
// passes since the last reset_times().
struct SimulationSummary {
  std::string target;         // the accelerator (hybrid) name
  std::string accelerators;   // e.g. "dense maeri_256mses_128_bw, sparse magma_..."
  std::int64_t forwards = 0;  // forward passes simulated
  std::int64_t samples = 0;   // samples over those passes
  std::int64_t lookups = 0;   // table indices over those passes (the EmbeddingBags' nnz)
  std::array<ComponentFigures, kComponents> components{};
  std::vector<backend::sim::NodeSimulation> nodes;  // the full graph's nodes, in order
  ComponentFigures& operator[](Component c) { return components[static_cast<std::size_t>(c)]; }
  const ComponentFigures& operator[](Component c) const {
    return components[static_cast<std::size_t>(c)];
  }
  ComponentFigures total() const;
  double cycle_share(Component c) const;  // of the total cycles, 0..1
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual std::string name() const = 0;
  // Runs the model on a batch; returns the batch's mean loss. `training`: keep what backward
  // needs (the batch must stay unchanged until backward()). Throws telar::Error for bad input
  // (an index out of range names its table).
  virtual float forward(const DlrmBatch& batch, bool training) = 0;
  // Click probabilities [n, 1] of the last forward.
  virtual const Tensor& probabilities() const = 0;
  // Gradients of the last training forward's loss (MLP parameters and the tables' rows used).
  virtual void backward() = 0;
  // SGD with learning rate lr on the MLPs and (sparsely) on the rows used.
  virtual void step(float lr) = 0;
  virtual const ComponentTimes& times() const = 0;
  // Clears the per-component figures (times, and the simulation's).
  virtual void reset_times() = 0;
  // The simulator's figures (`sim:` executors), else null.
  virtual const SimulationSummary* simulation() const { return nullptr; }

  // The MLPs as trained: the graph the parameters belong to (the dense variant with its loss)
  // and the parameters, for checkpoints. Call parameters_changed() after writing them.
  virtual const graph::Graph& training_graph() const = 0;
  virtual graph::ParameterSet& parameters() = 0;
  virtual void parameters_changed() = 0;
};

struct ExecutorOptions {
  LossFunction loss = LossFunction::Mse;
  std::uint64_t seed = 0;  // MLP initialisation
};

// "cpu", "cpu:threads=N", "cpu:ref", "sim:CONFIG.cfg", "sim:HYBRID.toml". Throws telar::Error
// (one line) for any other backend or an unreadable target. `sim`: for sim: backends, where
// STONNE's files per simulator call go (stats_dir), the energy table, the oracle mode.
std::unique_ptr<Executor> make_executor(DlrmModel& model, const std::string& backend,
                                        const ExecutorOptions& options,
                                        const backend::sim::SimOptions& sim = {});

// The CPU executor's internals, for tests (gradient checks) and benchmarks.
class CpuExecutor : public Executor {
 public:
  CpuExecutor(DlrmModel& model, const backend::BackendSpec& spec, const ExecutorOptions& options);
  ~CpuExecutor() override;
  std::string name() const override;
  float forward(const DlrmBatch& batch, bool training) override;
  const Tensor& probabilities() const override { return probabilities_; }
  void backward() override;
  void step(float lr) override;
  const ComponentTimes& times() const override { return times_; }
  void reset_times() override { times_ = {}; }

  const graph::Graph& training_graph() const override { return graph_; }
  graph::ParameterSet& parameters() override { return params_; }
  void parameters_changed() override { exe_->parameters_updated(); }
  const graph::ParameterSet& gradients() { return exe_->gradients(); }
  const SparseRowGrad& table_gradient(std::int64_t t) const { return table_grads_.at(t); }

 private:
  class Timer;
  DlrmModel& model_;
  ExecutorOptions options_;
  graph::Graph graph_;
  graph::ParameterSet params_;
  std::unique_ptr<backend::Executable> exe_;
  std::unique_ptr<Timer> timer_;
  std::vector<Tensor> inputs_;  // dense, emb/0.out .. emb/T-1.out, target
  std::vector<Tensor> output_grads_;
  std::vector<SparseRowGrad> table_grads_;
  std::vector<backend::cpu::BagSumJob> jobs_;  // the array tables' forward, run together
  std::vector<const float*> grad_inputs_;      // per table: d(loss)/d(its output)
  std::vector<std::string> what_;              // per table: its name in error messages
  const DlrmBatch* last_batch_ = nullptr;
  bool backward_done_ = false;
  int threads_ = 0;  // cpu:threads=N, 0: as set by --threads
  Tensor probabilities_;
  std::vector<graph::ValueId> mlp_parameters_;
  ComponentTimes times_;
};

}  // namespace telar::dlrm
