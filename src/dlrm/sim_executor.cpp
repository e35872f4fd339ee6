#include "dlrm/sim_executor.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/parse.hpp"

namespace telar::dlrm {

namespace bs = backend::sim;

void ComponentFigures::add(const ComponentFigures& o) {
  cycles += o.cycles;
  gb_reads += o.gb_reads;
  gb_writes += o.gb_writes;
  multiplications += o.multiplications;
  energy += o.energy;
  calls += o.calls;
}

ComponentFigures SimulationSummary::total() const {
  ComponentFigures t;
  for (const ComponentFigures& c : components) t.add(c);
  return t;
}

double SimulationSummary::cycle_share(Component c) const {
  const std::uint64_t all = total().cycles;
  return all ? static_cast<double>((*this)[c].cycles) / static_cast<double>(all) : 0.0;
}

namespace {

std::string describe_accelerator(const char* role, const std::optional<bs::AcceleratorChoice>& a) {
  if (!a) return "";
  const telar::sim::HardwareConfig& hw = a->hw;
  return fmt::format("{} {} ({} multipliers, dn_bw {}, rn_bw {}, {})", role, hw.name,
                     hw.multipliers(), hw.dn_bw, hw.rn_bw, telar::sim::name(hw.controller));
}

// The table an EmbeddingBag node reads: "emb/3" -> 3.
std::int64_t table_of(const graph::Node& node) {
  return parse_int(std::string_view(node.name).substr(4), "internal: EmbeddingBag node name");
}

void accumulate(bs::NodeSimulation& into, const bs::NodeSimulation& add) {
  into.calls += add.calls;
  into.stats.cycles += add.stats.cycles;
  into.stats.gb.weight_reads += add.stats.gb.weight_reads;
  into.stats.gb.input_reads += add.stats.gb.input_reads;
  into.stats.gb.psum_reads += add.stats.gb.psum_reads;
  into.stats.gb.psum_writes += add.stats.gb.psum_writes;
  into.stats.multiplications += add.stats.multiplications;
  into.stats.multipliers_mapped =
      std::max(into.stats.multipliers_mapped, add.stats.multipliers_mapped);
  into.stats.counters = add.stats.counters;
  into.energy += add.energy;
  into.workload = add.workload;  // the last pass's shape (the batch may be shorter)
  into.tile = add.tile;
}

// The tables of a DLRM share one SparseDense tile per shape (the mapper searches once, on the
// first table's bags): the accelerator is configured for the EmbeddingBags, not per table.
bs::SimOptions with_shared_tiles(bs::SimOptions o) {
  o.share_sparse_tiles = true;
  return o;
}

}  // namespace

bs::SimTarget load_sim_target(const backend::BackendSpec& spec) {
  require(spec.kind == "sim", "--backend {}: not a simulated accelerator (sim:FILE)", spec.text);
  require(!spec.target.empty(),
          "--backend {}: name the accelerator, e.g. sim:configs/hybrid_dlrm.toml", spec.text);
  const std::filesystem::path p(spec.target);
  require(p.extension() == ".cfg" || p.extension() == ".toml",
          "--backend {}: name a STONNE .cfg file or a hybrid .toml file", spec.text);
  return bs::load_target(p);
}

std::string describe_target(const bs::SimTarget& t) {
  std::string s;
  for (const std::string& part :
       {describe_accelerator("dense", t.dense), describe_accelerator("sparse", t.sparse),
        describe_accelerator("pruned", t.pruned)})
    if (!part.empty()) s += (s.empty() ? "" : "; ") + part;
  return s;
}

SimExecutor::SimExecutor(DlrmModel& model, bs::SimTarget target, std::string name,
                         const ExecutorOptions& options, const bs::SimOptions& sim)
    : model_(model),
      values_(model, backend::parse_backend_spec("cpu"), options),
      simulator_(std::move(target), with_shared_tiles(sim)),
      name_(std::move(name)) {
  summary_.target = simulator_.target().name;
  summary_.accelerators = describe_target(simulator_.target());
}

SimExecutor::~SimExecutor() = default;

void SimExecutor::reset_times() {
  values_.reset_times();
  const std::string target = summary_.target, accelerators = summary_.accelerators;
  summary_ = SimulationSummary{};
  summary_.target = target;
  summary_.accelerators = accelerators;
}

float SimExecutor::forward(const DlrmBatch& batch, bool training) {
  // The values first: this also checks the batch (bag offsets, indices in range).
  const float loss = values_.forward(batch, training);
  simulate(batch);
  return loss;
}

void SimExecutor::simulate(const DlrmBatch& batch) {
  const graph::Graph& g = model_.graph;
  const bool first = summary_.nodes.empty();
  std::size_t i = 0;
  for (const graph::Node& node : g.nodes()) {
    bs::NodeOperands o;
    o.batch = batch.size();
    if (node.kind == graph::OpKind::EmbeddingBag) {
      const std::int64_t t = table_of(node);
      o.indices = &batch.indices.at(static_cast<std::size_t>(t));
      o.offsets = &batch.offsets.at(static_cast<std::size_t>(t));
    }
    bs::NodeSimulation n = simulator_.simulate(g, node, o, false, files_);
    ComponentFigures f;
    f.cycles = n.stats.cycles;
    f.gb_reads = n.stats.gb.reads();
    f.gb_writes = n.stats.gb.writes();
    f.multiplications = n.stats.multiplications;
    f.energy = n.energy;
    f.calls = n.calls;
    summary_[component_of(node)].add(f);
    if (first)
      summary_.nodes.push_back(std::move(n));
    else
      accumulate(summary_.nodes.at(i), n);
    ++i;
  }
  // STONNE's files are written in the background: all of them before the forward returns (a
  // writer destroyed with files queued drops them).
  simulator_.finish_files();
  ++summary_.forwards;
  summary_.samples += batch.size();
  summary_.lookups += batch.lookups();
}

std::unique_ptr<Executor> make_sim_executor(DlrmModel& model, bs::SimTarget target,
                                            const std::string& name, const ExecutorOptions& options,
                                            const bs::SimOptions& sim) {
  if (!sim.stats_dir.empty()) ensure_writable_dir(sim.stats_dir);
  return std::make_unique<SimExecutor>(model, std::move(target), name, options, sim);
}

}  // namespace telar::dlrm
