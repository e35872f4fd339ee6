#include "backend/inference.hpp"

#include "core/error.hpp"

namespace telar::backend {

namespace {

class InferenceExecutable final : public Executable {
 public:
  InferenceExecutable(const BackendSpec& spec, const graph::Graph& source,
                      graph::ParameterSet& source_params, optimize::InferenceOptions passes,
                      const CompileOptions& options)
      : source_(source),
        source_params_(source_params),
        passes_(passes),
        compiled_(std::make_unique<optimize::InferenceGraph>(
            optimize::optimize_for_inference(source, source_params, passes))),
        inner_(compile(spec, compiled_->graph, compiled_->params, options)) {}

  void forward(std::span<const Tensor> inputs, Mode mode) override {
    if (mode != Mode::Eval) training_refused();
    inner_->set_observer(observer_);
    inner_->forward(inputs, Mode::Eval);
  }
  const Tensor& output(std::size_t i) const override { return inner_->output(i); }
  void backward(std::span<const Tensor>) override { training_refused(); }
  graph::ParameterSet& gradients() override { training_refused(); }
  const Tensor& input_gradient(std::size_t) const override { training_refused(); }

  // The passes are re-run over the caller's weights; their tensors take the new values in
  // place (the inner executable holds them).
  void parameters_updated() override {
    optimize::InferenceGraph again =
        optimize::optimize_for_inference(source_, source_params_, passes_);
    for (graph::ValueId id : again.params.ids()) {
      Tensor& held = compiled_->params.at(id);
      const Tensor& now = again.params.at(id);
      if (held.raw() != now.raw()) held.copy_from(now);
    }
    inner_->parameters_updated();
  }
  void release_plans() override { inner_->release_plans(); }
  std::optional<std::int64_t> planned_bytes() const override { return inner_->planned_bytes(); }
  bool last_forward_was_probe() const override { return inner_->last_forward_was_probe(); }
  void set_random_stream(std::uint64_t stream) override { inner_->set_random_stream(stream); }
  const graph::Graph& graph() const override { return compiled_->graph; }
  std::string name() const override { return inner_->name(); }

 private:
  [[noreturn]] static void training_refused() {
    fail("internal: a model compiled for inference runs evaluation-mode forward passes only");
  }

  const graph::Graph& source_;
  graph::ParameterSet& source_params_;
  optimize::InferenceOptions passes_;
  std::unique_ptr<optimize::InferenceGraph> compiled_;
  std::unique_ptr<Executable> inner_;
};

}  // namespace

std::optional<optimize::InferenceOptions> inference_passes(const BackendSpec& spec) {
  if (spec.kind == "cpu") return optimize::InferenceOptions{};
  if (spec.kind == "cuda") return optimize::InferenceOptions{.fuse = false};
  return std::nullopt;
}

std::unique_ptr<Executable> compile_for_inference(const BackendSpec& spec,
                                                  const graph::Graph& graph,
                                                  graph::ParameterSet& params, bool optimize,
                                                  const CompileOptions& options) {
  CompileOptions for_inference = options;
  for_inference.inference = true;
  const auto passes = inference_passes(spec);
  if (!optimize || !passes) return compile(spec, graph, params, for_inference);
  return std::make_unique<InferenceExecutable>(spec, graph, params, *passes, for_inference);
}

}  // namespace telar::backend
