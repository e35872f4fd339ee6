#pragma once
// DLRM on a simulated (hybrid) accelerator, the thesis' setting (spec §1.4, §10.4):
//   Linear layers    one dense call each on the target's dense engine (MAERI: FC M=batch,
//                    N=out, K=in; the bias on the host)
//   EmbeddingBag     one CSR sparse × dense call per table on the sparse engine (MAGMA): the
//                    bags are the rows of the sparse operand (indices and offsets as they come;
//                    no multi-hot vector is ever built), the table the dense operand; the
//                    simulation needs no table values, so procedural and memory-mapped tables
//                    are never read or copied for it
//   the rest         interaction, ReLU, sigmoid (and the loss) on the host, no simulated time
// The values are the CPU executor's (same model, same storage), so the outputs equal `cpu`'s
// bit for bit. Training runs backward and the update on the host too; only forward passes are
// simulated (as the thesis' simulated layers did). Figures add up over the forward passes.
#include <memory>

#include "backend/sim/lowering.hpp"
#include "dlrm/executor.hpp"

namespace telar::dlrm {

class SimExecutor : public Executor {
 public:
  SimExecutor(DlrmModel& model, backend::sim::SimTarget target, std::string name,
              const ExecutorOptions& options, const backend::sim::SimOptions& sim = {});
  ~SimExecutor() override;
  std::string name() const override { return name_; }
  float forward(const DlrmBatch& batch, bool training) override;
  const Tensor& probabilities() const override { return values_.probabilities(); }
  void backward() override { values_.backward(); }
  void step(float lr) override { values_.step(lr); }
  const ComponentTimes& times() const override { return values_.times(); }
  void reset_times() override;
  const SimulationSummary* simulation() const override { return &summary_; }
  const graph::Graph& training_graph() const override { return values_.training_graph(); }
  graph::ParameterSet& parameters() override { return values_.parameters(); }
  void parameters_changed() override { values_.parameters_changed(); }
  // Files STONNE's layout writes per call (SimOptions::stats_dir), over all passes.
  const std::vector<std::filesystem::path>& written_files() const { return files_; }

 private:
  void simulate(const DlrmBatch& batch);
  DlrmModel& model_;
  CpuExecutor values_;
  backend::sim::NodeSimulator simulator_;
  std::string name_;
  SimulationSummary summary_;
  std::vector<std::filesystem::path> files_;
};

// The `sim:` executor for a target built in code (the thesis preset) rather than read from a
// file; `name` is how it reports itself.
std::unique_ptr<Executor> make_sim_executor(DlrmModel& model, backend::sim::SimTarget target,
                                            const std::string& name, const ExecutorOptions& options,
                                            const backend::sim::SimOptions& sim = {});

// The target of a `sim:` backend string (a .cfg or .toml file); throws telar::Error naming
// `--backend` for anything else or an unreadable file.
backend::sim::SimTarget load_sim_target(const backend::BackendSpec& spec);

// "dense maeri_256mses_128_bw (256 MS, dn_bw 128, rn_bw 128), sparse magma_... ": what a
// target runs, for tables and run.json.
std::string describe_target(const backend::sim::SimTarget& target);

}  // namespace telar::dlrm
