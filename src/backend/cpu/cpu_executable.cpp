// The CPU executable: plans (one per batch size seen) over one set of gradients.
#include <fmt/format.h>

#include <map>

#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/plan.hpp"
#include "core/error.hpp"
#include "core/parse.hpp"
#include "core/threads.hpp"

namespace telar::backend::cpu {

namespace {

class CpuExecutable final : public Executable {
 public:
  CpuExecutable(const graph::Graph& graph, graph::ParameterSet& params, bool use_dnnl,
                int threads, const CompileOptions& options, std::string name)
      : graph_(graph),
        params_(params),
        grads_(graph::ParameterSet::zeros_like_parameters(graph)),
        use_dnnl_(use_dnnl),
        threads_(threads),
        seed_(options.seed),
        input_gradients_(options.input_gradients),
        name_(std::move(name)) {}

  void forward(std::span<const Tensor> inputs, Mode mode) override {
    if (threads_ > 0) set_compute_threads(threads_);
    if (inputs.empty()) fail("graph '{}' needs its inputs", graph_.name());
    std::int64_t batch = -1;
    for (std::size_t i = 0; i < inputs.size() && i < graph_.inputs().size(); ++i)
      if (graph_.value(graph_.inputs()[i]).shape.at(0) == kBatchDim) {
        batch = inputs[i].rank() > 0 ? inputs[i].dim(0) : -1;
        break;
      }
    if (batch <= 0) fail("batch size must be positive, got {}", batch);
    auto it = plans_.find(batch);
    if (it == plans_.end()) {
      PlanOptions o{use_dnnl_, seed_, &params_version_, input_gradients_};
      it = plans_.emplace(batch, std::make_unique<Plan>(graph_, params_, grads_, batch, o)).first;
    }
    current_ = it->second.get();
    current_->forward(inputs, mode, random_stream_++, observer_);
  }

  const Tensor& output(std::size_t i) const override {
    if (!current_) fail("internal: output() before forward()");
    return current_->output(i);
  }

  void backward(std::span<const Tensor> output_grads) override {
    if (!current_) fail("internal: backward() before forward()");
    if (threads_ > 0) set_compute_threads(threads_);
    current_->backward(output_grads, observer_);
  }

  graph::ParameterSet& gradients() override { return grads_; }
  const Tensor& input_gradient(std::size_t i) const override {
    if (!current_) fail("internal: input_gradient() before forward()");
    return current_->input_gradient(i);
  }
  void parameters_updated() override { ++params_version_; }
  const graph::Graph& graph() const override { return graph_; }
  std::string name() const override { return name_; }
  void set_random_stream(std::uint64_t stream) override { random_stream_ = stream; }

 private:
  const graph::Graph& graph_;
  graph::ParameterSet& params_;
  graph::ParameterSet grads_;
  bool use_dnnl_;
  int threads_;
  std::uint64_t seed_;
  std::vector<graph::ValueId> input_gradients_;
  std::string name_;
  std::uint64_t params_version_ = 0;
  std::uint64_t random_stream_ = 0;
  std::map<std::int64_t, std::unique_ptr<Plan>> plans_;
  Plan* current_ = nullptr;
};

}  // namespace

std::unique_ptr<Executable> compile(const BackendSpec& spec, const graph::Graph& graph,
                                    graph::ParameterSet& params, const CompileOptions& options) {
  int threads = 0;
  bool use_dnnl = true;
  if (spec.target == "ref") use_dnnl = false;
  else if (!spec.target.empty())
    fail("backend '{}': unknown cpu variant '{}'; use cpu or cpu:ref", spec.text, spec.target);
  for (const auto& [key, value] : spec.options) {
    if (key == "threads") {
      threads = static_cast<int>(parse_int(value, "cpu:threads"));
      require(threads > 0 && threads <= max_compute_threads(),
              "cpu:threads={} is out of range; give 1 to {} (this machine has {} cores)", threads,
              max_compute_threads(), hardware_threads());
    } else if (key == "ref") {
      use_dnnl = false;
    } else {
      fail("backend '{}': unknown option '{}'; cpu takes threads=N", spec.text, key);
    }
  }
  for (graph::ValueId id : graph.parameters())
    if (!params.has(id)) fail("internal: parameter '{}' has no tensor", graph.value(id).name);
  std::string name = use_dnnl ? "cpu" : "cpu:ref";
  if (threads > 0) name += fmt::format(":threads={}", threads);
  return std::make_unique<CpuExecutable>(graph, params, use_dnnl, threads, options, name);
}

}  // namespace telar::backend::cpu
