#include "dlrm/executor.hpp"

#include <cmath>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "core/parse.hpp"
#include "core/threads.hpp"
#include "dlrm/sim_executor.hpp"

namespace telar::dlrm {

DlrmModel::DlrmModel(DlrmConfig c, StorageKind storage, std::uint64_t s,
                     const std::filesystem::path& mmap_dir)
    : config(std::move(c)),
      graph(build_graph(config)),
      tables(config, storage, s, mmap_dir),
      seed(s) {}

// Time per component of the nodes the backend runs.
class CpuExecutor::Timer final : public backend::NodeObserver {
 public:
  explicit Timer(ComponentTimes& times) : times_(times) {}
  void on_node_begin(const graph::Node&, backend::Pass) override { start_ = now_ns(); }
  void on_node_end(const graph::Node& node, backend::Pass) override {
    times_[component_of(node)] += static_cast<double>(now_ns() - start_) * 1e-9;
  }

 private:
  ComponentTimes& times_;
  std::int64_t start_ = 0;
};

CpuExecutor::CpuExecutor(DlrmModel& model, const backend::BackendSpec& spec,
                         const ExecutorOptions& options)
    : model_(model), options_(options), graph_(build_training_graph(model.config, options.loss)) {
  params_ = graph::ParameterSet::initialize(graph_, options.seed);
  backend::CompileOptions co;
  co.seed = options.seed;
  const std::int64_t T = model.config.tables();
  for (std::int64_t t = 0; t < T; ++t)
    co.input_gradients.push_back(graph_.value_id(table_output_name(t)));
  exe_ = backend::compile(spec, graph_, params_, co);
  // cpu:threads=N holds for the tables' kernels too (the backend sets it for its own).
  if (auto it = spec.options.find("threads"); it != spec.options.end())
    threads_ = static_cast<int>(parse_int(it->second, "cpu:threads"));
  timer_ = std::make_unique<Timer>(times_);
  exe_->set_observer(timer_.get());
  inputs_.resize(static_cast<std::size_t>(T + 2));
  table_grads_.resize(static_cast<std::size_t>(T));
  grad_inputs_.resize(static_cast<std::size_t>(T));
  for (std::int64_t t = 0; t < T; ++t)
    what_.push_back(
        fmt::format("table {} ({} rows, --arch-embedding-size)", t, model.config.table_rows[t]));
  Tensor one(Shape{});
  one.f32()[0] = 1.0f;
  output_grads_ = {Tensor(), one};
  mlp_parameters_ = graph_.parameters();
}

CpuExecutor::~CpuExecutor() = default;

std::string CpuExecutor::name() const {
  return exe_->name();
}

float CpuExecutor::forward(const DlrmBatch& batch, bool training) {
  const DlrmConfig& c = model_.config;
  const std::int64_t n = batch.size(), T = c.tables(), d = c.embedding_dim;
  require(n > 0, "internal: empty DLRM batch");
  if (threads_ > 0) set_compute_threads(threads_);
  require(static_cast<std::int64_t>(batch.indices.size()) == T &&
              static_cast<std::int64_t>(batch.offsets.size()) == T,
          "the batch has bags for {} tables, the model {}", batch.indices.size(), T);
  Stopwatch sw;
  jobs_.clear();
  for (std::int64_t t = 0; t < T; ++t) {
    if (batch.offsets[t].numel() != n)
      fail("table {}: {} bag offsets for a batch of {} samples", t, batch.offsets[t].numel(), n);
    const CsrBags bags = batch.bags(t);
    check_bags(bags, c.table_rows[t], what_[t]);
    Tensor& out = inputs_[1 + t];
    if (!out.defined() || out.dim(0) != n) out = Tensor({n, d});
    // Array tables run together in one parallel region; procedural ones generate their rows.
    if (const float* rows = model_.tables[t].array())
      jobs_.push_back({rows, d, bags, out.f32()});
    else
      model_.tables[t].forward(bags, out.f32());
  }
  if (!jobs_.empty()) backend::cpu::embedding_bag_sum_many(jobs_);
  times_[Component::EmbeddingBags] += sw.seconds();
  inputs_[0] = batch.dense;
  inputs_[T + 1] = batch.target;
  exe_->forward(inputs_, training ? backend::Mode::Train : backend::Mode::Eval);
  last_batch_ = training ? &batch : nullptr;
  backward_done_ = false;

  const Tensor& out = exe_->output(0);
  if (!probabilities_.defined() || probabilities_.dim(0) != n) probabilities_ = Tensor({n, 1});
  const float* z = out.f32();
  float* p = probabilities_.f32();
  if (options_.loss == LossFunction::Mse) {
    std::copy(z, z + n, p);
  } else {
    for (std::int64_t i = 0; i < n; ++i) p[i] = 1.0f / (1.0f + std::exp(-z[i]));
  }
  return exe_->output(1).f32()[0];
}

void CpuExecutor::backward() {
  if (!last_batch_) fail("internal: DLRM backward() needs a training forward() first");
  exe_->backward(output_grads_);
  Stopwatch sw;
  // One parallel region over the tables (each table's gradient is built by one thread).
  const std::int64_t T = model_.config.tables();
  for (std::int64_t t = 0; t < T; ++t) grad_inputs_[t] = exe_->input_gradient(1 + t).f32();
  parallel_for_dynamic(0, T, T > 1, 1, [&](std::int64_t t) {
    backend::cpu::embedding_bag_sparse_backward(last_batch_->bags(t), grad_inputs_[t],
                                                model_.config.embedding_dim, table_grads_[t]);
  });
  times_[Component::EmbeddingBags] += sw.seconds();
  backward_done_ = true;
}

void CpuExecutor::step(float lr) {
  if (!last_batch_ || !backward_done_) fail("internal: DLRM step() needs a backward() first");
  const graph::ParameterSet& grads = exe_->gradients();
  for (graph::ValueId id : mlp_parameters_) {
    float* w = params_.at(id).f32();
    const float* g = grads.at(id).f32();
    const std::int64_t n = params_.at(id).numel();
    parallel_for(0, n, n > 65536, [&](std::int64_t i) { w[i] -= lr * g[i]; });
  }
  exe_->parameters_updated();
  Stopwatch sw;
  const std::int64_t T = model_.config.tables();
  parallel_for_dynamic(0, T, T > 1, 1,
                       [&](std::int64_t t) { model_.tables[t].apply_sgd(table_grads_[t], lr); });
  times_[Component::EmbeddingBags] += sw.seconds();
  last_batch_ = nullptr;
  backward_done_ = false;
}

std::unique_ptr<Executor> make_executor(DlrmModel& model, const std::string& backend,
                                        const ExecutorOptions& options,
                                        const backend::sim::SimOptions& sim) {
  const backend::BackendSpec spec = backend::parse_backend_spec(backend);
  if (spec.kind == "cpu") return std::make_unique<CpuExecutor>(model, spec, options);
  if (spec.kind == "sim")
    return make_sim_executor(model, load_sim_target(spec), spec.text, options, sim);
  fail(
      "--backend {}: DLRM runs on cpu or on a simulated accelerator (sim:CONFIG.cfg or "
      "sim:HYBRID.toml)",
      backend);
}

}  // namespace telar::dlrm
