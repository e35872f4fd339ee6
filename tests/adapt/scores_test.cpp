// Training-free candidate scores and the hybrid schedule, against values derived by hand: the
// log-determinant of small matrices, NASWOT's kernel of three samples through one ReLU (and
// through two, summed or each on its own), the
// gradient norm against finite differences of the loss, and the iterations the schedule needs.
#include "adapt/scores.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "adapt/netadapt.hpp"
#include "backend/backend.hpp"
#include "core/error.hpp"
#include "graph/builder.hpp"

using namespace telar;
using namespace telar::adapt;

namespace {

// x[N,2] -> ReLU -> Linear(2 -> 2): the output.
graph::Graph relu_then_linear() {
  graph::GraphBuilder b("tiny");
  graph::ValueId x = b.input("x", {2});
  b.output(b.linear(b.relu(x), 2, "fc"));
  return b.finish();
}

TEST(Scores, NaswotKernelOfThreeSamples) {
  const graph::Graph g = relu_then_linear();
  const graph::ParameterSet w = graph::ParameterSet::initialize(g, 1);
  // Codes (1,1), (1,0), (0,0): agreements K = [[2,1,0],[1,2,1],[0,1,2]], det 4.
  const Tensor x = Tensor::from(std::vector<float>{1, 1, 1, -1, -1, -1}, {3, 2});
  Tensor labels({3}, DType::I64);
  EXPECT_NEAR(
      training_free_score(CandidateScore::Naswot, g, w, graph::LossKind::CrossEntropy, x, labels),
      std::log(4.0), 1e-9);
  EXPECT_DOUBLE_EQ(
      training_free_score(CandidateScore::Params, g, w, graph::LossKind::CrossEntropy, x, labels),
      6.0);
  EXPECT_EQ(parse_score("grad-norm"), CandidateScore::GradNorm);
  EXPECT_THROW(parse_score("snip"), Error);
}

// x -> ReLU -> ReLU -> Linear: both rectifiers see the codes above, K each. naswot sums them:
// det 2K = 8 x 4; naswot-layers adds each one's log det(K + I), [[3,1,0],[1,3,1],[0,1,3]],
// det 3 x 8 - 1 x 3 = 21.
TEST(Scores, NaswotLayersTakesEachRectifiersKernelOnItsOwn) {
  graph::GraphBuilder b("two");
  const graph::ValueId x = b.input("x", {2});
  b.output(b.linear(b.relu(b.relu(x)), 2, "fc"));
  const graph::Graph g = b.finish();
  const graph::ParameterSet w = graph::ParameterSet::initialize(g, 1);
  const Tensor images = Tensor::from(std::vector<float>{1, 1, 1, -1, -1, -1}, {3, 2});
  Tensor labels({3}, DType::I64);
  EXPECT_NEAR(training_free_score(CandidateScore::Naswot, g, w, graph::LossKind::CrossEntropy,
                                  images, labels),
              std::log(32.0), 1e-9);
  EXPECT_NEAR(training_free_score(CandidateScore::NaswotLayers, g, w, graph::LossKind::CrossEntropy,
                                  images, labels),
              2.0 * std::log(21.0), 1e-9);
  EXPECT_EQ(parse_score("naswot-layers"), CandidateScore::NaswotLayers);
}

TEST(Scores, GradNormIsTheSumOfEachParametersGradientNormByFiniteDifferences) {
  const graph::Graph g = relu_then_linear();
  graph::ParameterSet w = graph::ParameterSet::initialize(g, 2);
  const Tensor x = Tensor::from(std::vector<float>{0.5f, 1.5f, 2.0f, -1.0f, 1.0f, 0.25f}, {3, 2});
  Tensor labels({3}, DType::I64);
  labels.data<std::int64_t>()[0] = 1;
  const double score =
      training_free_score(CandidateScore::GradNorm, g, w, graph::LossKind::CrossEntropy, x, labels);
  // The loss by a forward pass, and its central differences, parameter by parameter.
  const graph::Graph with_loss = graph::with_loss(g, graph::LossKind::CrossEntropy);
  const auto loss = [&] {
    auto exe = backend::compile(backend::parse_backend_spec("cpu:ref"), with_loss, w);
    const Tensor in[] = {x, labels};
    exe->forward(in, backend::Mode::Eval);
    return static_cast<double>(exe->output(1).f32()[0]);
  };
  double expected = 0.0;
  for (graph::ValueId id : g.parameters()) {
    double sq = 0.0;
    for (float& v : w.at(id).span<float>()) {
      const float keep = v;
      const float h = 1e-2f;
      v = keep + h;
      const double up = loss();
      v = keep - h;
      const double down = loss();
      v = keep;
      const double d = (up - down) / (2.0 * h);
      sq += d * d;
    }
    expected += std::sqrt(sq);
  }
  EXPECT_NEAR(score, expected, 1e-3 * expected);
}

// Sets a parameter of node `name` (input `index`: 1 the weight, 2 the bias) to `values`.
void set(const graph::Graph& g, graph::ParameterSet& w, const std::string& name, std::size_t index,
         const std::vector<float>& values) {
  const auto v = w.at(g.find_node(name)->inputs.at(index)).span<float>();
  ASSERT_EQ(v.size(), values.size());
  std::copy(values.begin(), values.end(), v.begin());
}

TEST(Scores, SynflowByHandOnTwoLinearLayers) {
  // x[N,2] -> fc1 (2 -> 2) -> ReLU -> Dropout -> fc2 (2 -> 1). With every parameter its
  // magnitude and x = (1, 1): h_j = Σ_k |W_jk| + |b_j| (positive, so the ReLU passes it),
  // y = Σ_j |V_j| h_j + |c|. θ·∂y/∂θ summed: Σ_j |V_j| h_j over V, |c| over c, and
  // Σ_j |V_j| (Σ_k |W_jk| + |b_j|) over W and b: in all 2(y − |c|) + |c|.
  graph::GraphBuilder b("two");
  graph::ValueId x = b.input("x", {2});
  b.output(b.linear(b.dropout(b.relu(b.linear(x, 2, "fc1")), 0.5f), 1, "fc2"));
  const graph::Graph g = b.finish();
  graph::ParameterSet w = graph::ParameterSet::initialize(g, 3);
  set(g, w, "fc1", 1, {0.5f, -1.0f, 2.0f, 0.25f});
  set(g, w, "fc1", 2, {-0.5f, 1.0f});
  set(g, w, "fc2", 1, {-3.0f, 0.5f});
  set(g, w, "fc2", 2, {0.75f});
  const double h0 = 0.5 + 1.0 + 0.5, h1 = 2.0 + 0.25 + 1.0;
  const double y = 3.0 * h0 + 0.5 * h1 + 0.75;
  // The data are not read: only their shape (one sample of it, all ones).
  const Tensor data = Tensor::from(std::vector<float>{-7, 3, 9, -2}, {2, 2});
  Tensor labels({2}, DType::I64);
  EXPECT_NEAR(training_free_score(CandidateScore::Synflow, g, w, graph::LossKind::CrossEntropy,
                                  data, labels),
              std::log(2.0 * (y - 0.75) + 0.75), 1e-6);
  EXPECT_EQ(parse_score("synflow"), CandidateScore::Synflow);
}

TEST(Scores, SynflowLeavesBatchNormOut) {
  // conv -> BatchNorm -> ReLU -> conv: the same score whatever the BatchNorm holds, and the
  // same as the network without it.
  const auto build = [](bool batchnorm) {
    graph::GraphBuilder b(batchnorm ? "bn" : "plain");
    graph::ValueId x = b.conv2d(b.input("x", {2, 5, 5}), 3, 3, 1, 1, 1, true, "c1");
    if (batchnorm) x = b.batchnorm2d(x, "bn");
    b.output(b.conv2d(b.relu(x), 2, 3, 1, 0, 1, true, "c2"));
    return b.finish();
  };
  const graph::Graph with_bn = build(true), plain = build(false);
  graph::ParameterSet w_bn = graph::ParameterSet::initialize(with_bn, 4);
  graph::ParameterSet w_plain = graph::ParameterSet::initialize(plain, 5);
  for (const char* node : {"c1", "c2"})
    for (std::size_t k : {1, 2}) {
      const auto from = w_bn.at(with_bn.find_node(node)->inputs.at(k)).span<float>();
      set(plain, w_plain, node, k, std::vector<float>(from.begin(), from.end()));
    }
  const Tensor data({1, 2, 5, 5});
  Tensor labels({1}, DType::I64);
  const auto score = [&](const graph::Graph& g, const graph::ParameterSet& w) {
    return training_free_score(CandidateScore::Synflow, g, w, graph::LossKind::CrossEntropy, data,
                               labels);
  };
  const double expected = score(plain, w_plain);
  EXPECT_NEAR(score(with_bn, w_bn), expected, 1e-6 * std::fabs(expected));
  set(with_bn, w_bn, "bn", 1, {5.0f, -0.1f, 2.0f});  // gamma
  set(with_bn, w_bn, "bn", 2, {-4.0f, 3.0f, 1.0f});  // beta
  EXPECT_NEAR(score(with_bn, w_bn), expected, 1e-6 * std::fabs(expected));
}

TEST(Scores, TheScheduleSaysHowManyIterationsAHybridChoosesByItsScore) {
  NetAdaptOptions o;
  o.max_iterations = 100;
  // δ 0.025, decay 0.96: 1 − 0.96^k ≥ 0.8 first at k = 40 (0.96^39 = 0.203, 0.96^40 = 0.195).
  EXPECT_EQ(scheduled_iterations(o), 40);
  o.max_iterations = 30;
  EXPECT_EQ(scheduled_iterations(o), 30);
  o.max_iterations = 100;
  EXPECT_EQ(score_iterations(o), 0);  // --score finetune
  o.score = CandidateScore::Naswot;
  o.hybrid = 30;
  EXPECT_EQ(score_iterations(o), 28);  // H30: the last 12 of 40 by accuracy
  o.delta = 0.1;
  o.decay = 1.0;
  o.hybrid = 0;
  EXPECT_EQ(score_iterations(o), 5);  // 5 × 0.1 reach 0.5
  o.score = CandidateScore::FineTune;
  o.hybrid = 30;
  EXPECT_THROW(check_options(o), Error);
}

}  // namespace
