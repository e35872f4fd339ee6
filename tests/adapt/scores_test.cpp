// Training-free candidate scores and the hybrid schedule, against values derived by hand: the
// log-determinant of small matrices, NASWOT's kernel of three samples through one ReLU, the
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

TEST(Scores, LogAbsDeterminantByHand) {
  EXPECT_NEAR(log_abs_determinant({2, 1, 1, 3}, 2), std::log(5.0), 1e-12);
  // A row swap is needed (zero first pivot); det = -4.
  EXPECT_NEAR(log_abs_determinant({0, 1, 0, 1, 0, 0, 0, 0, 4}, 3), std::log(4.0), 1e-12);
  EXPECT_EQ(log_abs_determinant({1, 2, 2, 4}, 2), -std::numeric_limits<double>::infinity());
}

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
