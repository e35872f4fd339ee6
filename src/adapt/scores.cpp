#include "adapt/scores.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "adapt/dense_lu.hpp"
#include "backend/backend.hpp"
#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "optimize/rewriter.hpp"

namespace telar::adapt {

namespace {

inline constexpr EnumNames<CandidateScore, CandidateScore::NaswotLayers> kScoreNames{
    {"finetune", "naswot", "grad-norm", "synflow", "params", "naswot-layers"}};

bool is_rectifier(graph::OpKind kind) {
  return kind == graph::OpKind::ReLU || kind == graph::OpKind::ReLU6;
}

// Per rectifier of `model`, the kernel K[i][j] of `images` (batch x batch, row-major): the
// units of its output where samples i and j are both on or both off.
std::vector<std::vector<double>> agreement_kernels(const graph::Graph& model,
                                                   const graph::ParameterSet& weights,
                                                   const Tensor& images, std::string_view score) {
  // The model with every rectifier's output as an output too.
  graph::Graph g = model;
  std::size_t codes = 0;
  for (const graph::Node& n : model.nodes())
    if (is_rectifier(n.kind)) {
      g.add_output(n.outputs.at(0));
      ++codes;
    }
  require(codes > 0, "--score {} needs a network with ReLUs; {} has none", score, model.name());
  graph::ParameterSet w = weights;
  auto exe = backend::compile(backend::parse_backend_spec("cpu"), g, w);
  exe->forward(std::span<const Tensor>(&images, 1), backend::Mode::Eval);
  const std::size_t batch = static_cast<std::size_t>(images.dim(0));
  std::vector<std::vector<double>> kernels;
  std::vector<std::uint8_t> on;
  for (std::size_t o = model.outputs().size(); o < g.outputs().size(); ++o) {
    const Tensor& a = exe->output(o);
    const std::size_t units = static_cast<std::size_t>(a.numel()) / batch;
    on.resize(a.numel());
    for (std::int64_t i = 0; i < a.numel(); ++i) on[static_cast<std::size_t>(i)] = a.f32()[i] > 0;
    std::vector<double> k(batch * batch, 0.0);
    for (std::size_t i = 0; i < batch; ++i)
      for (std::size_t j = i; j < batch; ++j) {
        std::size_t agree = 0;
        const std::uint8_t* x = on.data() + i * units;
        const std::uint8_t* y = on.data() + j * units;
        for (std::size_t u = 0; u < units; ++u) agree += x[u] == y[u];
        k[i * batch + j] = k[j * batch + i] = static_cast<double>(agree);
      }
    kernels.push_back(std::move(k));
  }
  return kernels;
}

double naswot(const graph::Graph& model, const graph::ParameterSet& weights, const Tensor& images) {
  const std::size_t batch = static_cast<std::size_t>(images.dim(0));
  std::vector<double> k(batch * batch, 0.0);
  for (const std::vector<double>& layer : agreement_kernels(model, weights, images, "naswot"))
    for (std::size_t i = 0; i < k.size(); ++i) k[i] += layer[i];
  return log_abs_determinant(std::move(k), batch);
}

double naswot_layers(const graph::Graph& model, const graph::ParameterSet& weights,
                     const Tensor& images) {
  const std::size_t batch = static_cast<std::size_t>(images.dim(0));
  double score = 0.0;
  for (std::vector<double> k : agreement_kernels(model, weights, images, "naswot-layers")) {
    for (std::size_t i = 0; i < batch; ++i) k[i * batch + i] += 1.0;
    score += log_abs_determinant(std::move(k), batch);
  }
  return score;
}

double grad_norm(const graph::Graph& model, const graph::ParameterSet& weights,
                 graph::LossKind loss, const Tensor& images, const Tensor& labels) {
  const graph::Graph g = graph::with_loss(model, loss);
  graph::ParameterSet w = weights;
  auto exe = backend::compile(backend::parse_backend_spec("cpu"), g, w);
  const Tensor inputs[] = {images, labels};
  exe->forward(inputs, backend::Mode::Train);
  Tensor seed(Shape{});
  seed.f32()[0] = 1.0f;
  const Tensor grads[] = {Tensor(), seed};
  exe->backward(grads);
  double sum = 0.0;
  for (graph::ValueId id : g.parameters()) {
    double sq = 0.0;
    for (float v : exe->gradients().at(id).span<float>()) sq += static_cast<double>(v) * v;
    sum += std::sqrt(sq);
  }
  return sum;
}

double synflow(const graph::Graph& model, const graph::ParameterSet& weights,
               const Tensor& images) {
  // BatchNorm and Dropout left out (the proxy's networks have neither), every parameter its
  // magnitude.
  optimize::GraphRewriter r(model, weights);
  for (const graph::Node& n : model.nodes()) {
    if (n.kind == graph::OpKind::BatchNorm2d || n.kind == graph::OpKind::Dropout)
      r.redirect(n.outputs.at(0), r.map(n.inputs.at(0)));
    else
      r.copy(n);
  }
  optimize::Rewritten linear = r.finish(0);
  for (graph::ValueId id : linear.graph.parameters())
    for (float& v : linear.params.at(id).span<float>()) v = std::fabs(v);
  auto exe = backend::compile(backend::parse_backend_spec("cpu"), linear.graph, linear.params);
  // One sample of ones; R = the sum of the outputs, so each output's gradient is ones.
  Shape sample = images.shape();
  sample[0] = 1;
  Tensor ones(sample);
  for (float& v : ones.span<float>()) v = 1.0f;
  exe->forward(std::span<const Tensor>(&ones, 1), backend::Mode::Train);
  std::vector<Tensor> grads;
  for (std::size_t o = 0; o < linear.graph.outputs().size(); ++o) {
    Tensor g(exe->output(o).shape());
    for (float& v : g.span<float>()) v = 1.0f;
    grads.push_back(std::move(g));
  }
  exe->backward(grads);
  double sum = 0.0;
  for (graph::ValueId id : linear.graph.parameters()) {
    const auto theta = linear.params.at(id).span<float>();
    const auto grad = exe->gradients().at(id).span<float>();
    for (std::size_t i = 0; i < theta.size(); ++i)
      sum += static_cast<double>(theta[i]) * static_cast<double>(grad[i]);
  }
  require(std::isfinite(sum) && sum > 0.0,
          "--score synflow is {} on {} (its products over the layers leave float's range); use "
          "--score naswot",
          sum, model.name());
  return std::log(sum);
}

}  // namespace

std::string_view score_name(CandidateScore score) {
  return kScoreNames(score);
}

CandidateScore parse_score(std::string_view text) {
  if (const auto score = kScoreNames.find(text)) return *score;
  fail("--score '{}' is not a candidate score; use {}", text, kScoreNames.choices());
}

double training_free_score(CandidateScore score, const graph::Graph& model,
                           const graph::ParameterSet& weights, graph::LossKind loss,
                           const Tensor& images, const Tensor& labels) {
  switch (score) {
    case CandidateScore::Naswot:
      return naswot(model, weights, images);
    case CandidateScore::NaswotLayers:
      return naswot_layers(model, weights, images);
    case CandidateScore::GradNorm:
      return grad_norm(model, weights, loss, images, labels);
    case CandidateScore::Synflow:
      return synflow(model, weights, images);
    case CandidateScore::Params:
      return static_cast<double>(model.parameter_count());
    case CandidateScore::FineTune:
      break;
  }
  fail("internal: {} is not a training-free score", score_name(score));
}

}  // namespace telar::adapt
