// The `sim:` executable: the CPU backend computes the values (on a copy of the graph that also
// outputs the activations the simulator must see), then every node is simulated in order.
#include <fmt/format.h>

#include <map>
#include <set>

#include "backend/cpu/cpu_backend.hpp"
#include "backend/sim/lowering.hpp"
#include "backend/sim/sim_backend.hpp"
#include "core/error.hpp"
#include "core/files.hpp"

namespace telar::backend::sim {

namespace fs = std::filesystem;
using graph::OpKind;

SimulationTotals totals(const std::vector<NodeSimulation>& nodes) {
  SimulationTotals t;
  for (const NodeSimulation& n : nodes) {
    if (!n.simulated()) {
      ++t.host_nodes;
      continue;
    }
    ++t.simulated_nodes;
    t.cycles += n.stats.cycles;
    t.gb_reads += n.stats.gb.reads();
    t.gb_writes += n.stats.gb.writes();
    t.multiplications += n.stats.multiplications;
    t.energy += n.energy;
  }
  return t;
}

namespace {

bool has_weights(OpKind kind) {
  return kind == OpKind::Linear || kind == OpKind::Conv2d;
}

class SimExecutable final : public Executable, public Simulated {
 public:
  SimExecutable(const BackendSpec& spec, const graph::Graph& graph, graph::ParameterSet& params,
                const CompileOptions& options, SimOptions sim_options, SimTarget target)
      : graph_(graph),
        params_(params),
        pruning_(sim_options.weight_sparsity > 0.0),
        sparsity_(sim_options.weight_sparsity),
        simulator_(std::move(target), std::move(sim_options)),
        name_(spec.text) {
    require(sparsity_ >= 0.0 && sparsity_ < 1.0,
            "weight sparsity {} must be at least 0 and below 1 (a fraction of zeros)", sparsity_);
    // The values the simulator reads that are neither graph inputs nor outputs become extra
    // outputs of the graph the CPU backend runs.
    inner_graph_ = graph;
    std::set<graph::ValueId> inputs(graph.inputs().begin(), graph.inputs().end());
    for (std::size_t i = 0; i < graph.outputs().size(); ++i) output_index_[graph.outputs()[i]] = i;
    auto expose = [&](graph::ValueId v) {
      if (inputs.count(v) || output_index_.count(v)) return;
      output_index_[v] = inner_graph_.outputs().size();
      inner_graph_.add_output(v);
    };
    for (const graph::Node& node : graph.nodes()) {
      const bool pruned = pruning_ && has_weights(node.kind);
      if (!simulator_.needs_activations(node, pruned)) continue;
      expose(node.inputs[0]);
      if (node.kind == OpKind::EmbeddingBag) expose(node.inputs[1]);
    }
    graph::ParameterSet* values = &params_;
    if (pruning_) {
      pruned_ = params_;  // shares every tensor ...
      values = &pruned_;
      prune();  // ... but the pruned weights
    }
    BackendSpec cpu_spec = parse_backend_spec("cpu");
    inner_ = cpu::compile(cpu_spec, inner_graph_, *values, options);
  }

  void forward(std::span<const Tensor> inputs, Mode mode) override {
    inner_->set_observer(observer_);
    inner_->forward(inputs, mode);
    const std::int64_t batch = batch_size_of(graph_, inputs);
    auto value_of = [&](graph::ValueId v) -> const Tensor* {
      for (std::size_t i = 0; i < graph_.inputs().size() && i < inputs.size(); ++i)
        if (graph_.inputs()[i] == v) return &inputs[i];
      auto it = output_index_.find(v);
      return it == output_index_.end() ? nullptr : &inner_->output(it->second);
    };
    const graph::ParameterSet& values = pruning_ ? pruned_ : params_;
    nodes_.clear();
    files_.clear();
    for (const graph::Node& node : graph_.nodes()) {
      const bool pruned = pruning_ && has_weights(node.kind);
      NodeOperands o;
      o.batch = batch;
      if (simulator_.needs_activations(node, pruned)) {
        o.x = value_of(node.inputs[0]);
        if (node.kind == OpKind::EmbeddingBag) {
          o.indices = o.x;
          o.offsets = value_of(node.inputs[1]);
        } else {
          o.weight = &values.at(node.inputs[1]);
        }
      }
      nodes_.push_back(simulator_.simulate(graph_, node, o, pruned, files_));
    }
    simulator_.finish_files();
  }

  const Tensor& output(std::size_t i) const override {
    require(i < graph_.outputs().size(), "internal: output {} of {}", i, graph_.outputs().size());
    return inner_->output(i);
  }

  void backward(std::span<const Tensor> output_grads) override {
    std::vector<Tensor> grads(output_grads.begin(), output_grads.end());
    grads.resize(inner_graph_.outputs().size());  // the extra outputs get no gradient
    inner_->backward(grads);
  }

  graph::ParameterSet& gradients() override { return inner_->gradients(); }
  // The inner graph has the same inputs (only extra outputs), so input indices carry over.
  const Tensor& input_gradient(std::size_t i) const override { return inner_->input_gradient(i); }

  void parameters_updated() override {
    if (pruning_) prune();
    inner_->parameters_updated();
  }

  void release_plans() override { inner_->release_plans(); }
  std::optional<std::int64_t> planned_bytes() const override { return inner_->planned_bytes(); }
  void set_random_stream(std::uint64_t stream) override { inner_->set_random_stream(stream); }
  const graph::Graph& graph() const override { return graph_; }
  std::string name() const override { return name_; }

  const std::vector<NodeSimulation>& node_simulations() const override { return nodes_; }
  const SimTarget& target() const override { return simulator_.target(); }
  const std::vector<fs::path>& written_files() const override { return files_; }

 private:
  void prune() {
    for (const graph::Node& node : graph_.nodes()) {
      if (!has_weights(node.kind)) continue;
      const graph::ValueId w = node.inputs[1];
      Tensor copy = params_.at(w).clone();
      prune_by_magnitude(copy, sparsity_);
      pruned_.set(w, std::move(copy));
    }
  }

  const graph::Graph& graph_;
  graph::ParameterSet& params_;
  bool pruning_;
  double sparsity_;
  graph::ParameterSet pruned_;
  NodeSimulator simulator_;
  std::string name_;
  graph::Graph inner_graph_;
  std::map<graph::ValueId, std::size_t> output_index_;
  std::unique_ptr<Executable> inner_;
  std::vector<NodeSimulation> nodes_;
  std::vector<fs::path> files_;
};

}  // namespace

std::unique_ptr<Executable> compile(const BackendSpec& spec, const graph::Graph& graph,
                                    graph::ParameterSet& params, const CompileOptions& options,
                                    const SimOptions& sim_options) {
  require(!spec.target.empty(),
          "backend '{}': name the accelerator, e.g. sim:configs/maeri_256mses_128_bw.cfg or "
          "sim:configs/hybrid_dlrm.toml",
          spec.text);
  SimTarget target = load_target(spec.target);
  if (!sim_options.stats_dir.empty()) ensure_writable_dir(sim_options.stats_dir);
  return std::make_unique<SimExecutable>(spec, graph, params, options, sim_options,
                                         std::move(target));
}

const Simulated* simulated(const Executable& executable) {
  return dynamic_cast<const Simulated*>(&executable);
}

}  // namespace telar::backend::sim
