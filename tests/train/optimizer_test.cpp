// Optimizer updates against hand-computed steps (PyTorch's update rules worked through on
// paper, intermediate values in the comments) and against closed-form behaviour on quadratics.
#include "train/optim/optimizer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "graph/builder.hpp"
#include "test_support.hpp"
#include "train/optim/adagrad.hpp"
#include "train/optim/adam.hpp"
#include "train/optim/lr_schedule.hpp"
#include "train/optim/sgd.hpp"

using namespace telar;
using namespace telar::train;
using graph::ParameterSet;
using graph::ValueId;
using telar::train::testing::expect_error;

namespace {

// One parameter (ValueId 0) with the given values, and a gradient set beside it.
struct Problem {
  ParameterSet params, grads;
  std::vector<ValueId> ids = {0};

  explicit Problem(std::vector<float> initial) {
    const auto n = static_cast<std::int64_t>(initial.size());
    params.set(0, Tensor::from(initial, {n}));
    grads.set(0, Tensor({n}));
  }
  void step(Optimizer& opt, std::vector<float> grad, float lr) {
    std::memcpy(grads.at(0).f32(), grad.data(), grad.size() * sizeof(float));
    opt.step(params, grads, ids, lr);
  }
  float p(int i) const { return params.at(0).f32()[i]; }
};

}  // namespace

TEST(Sgd, PlainStepWithWeightDecay) {
  // g' = g + 0.1 p; p -= 0.1 g'.  p: 1 -> 1 - 0.1 * 1.1 = 0.89 -> 0.89 - 0.1 * 1.089 = 0.7811
  Sgd sgd({.momentum = 0.0f, .nesterov = false, .weight_decay = 0.1f});
  Problem x({1.0f});
  x.step(sgd, {1.0f}, 0.1f);
  EXPECT_NEAR(x.p(0), 0.89f, 1e-6);
  x.step(sgd, {1.0f}, 0.1f);
  EXPECT_NEAR(x.p(0), 0.7811f, 1e-6);
}

TEST(Sgd, MomentumThreeSteps) {
  // mu 0.9, lr 0.1, constant gradients (1, 0.5):
  //   buf 1, 1.9, 2.71          p0: 1 -> 0.9 -> 0.71 -> 0.439
  //   buf 0.5, 0.95, 1.355      p1: -1 -> -1.05 -> -1.145 -> -1.2805
  Sgd sgd({.momentum = 0.9f, .nesterov = false, .weight_decay = 0.0f});
  Problem x({1.0f, -1.0f});
  const float p0[] = {0.9f, 0.71f, 0.439f}, p1[] = {-1.05f, -1.145f, -1.2805f};
  for (int s = 0; s < 3; ++s) {
    x.step(sgd, {1.0f, 0.5f}, 0.1f);
    EXPECT_NEAR(x.p(0), p0[s], 1e-6) << "step " << s + 1;
    EXPECT_NEAR(x.p(1), p1[s], 1e-6) << "step " << s + 1;
  }
}

TEST(Sgd, MomentumWithWeightDecay) {
  // mu 0.5, wd 0.5, lr 0.1, p 2, g 1:
  //   step 1: g' = 1 + 1 = 2, buf = 2, p = 2 - 0.2 = 1.8
  //   step 2: g' = 1 + 0.9 = 1.9, buf = 1 + 1.9 = 2.9, p = 1.8 - 0.29 = 1.51
  Sgd sgd({.momentum = 0.5f, .nesterov = false, .weight_decay = 0.5f});
  Problem x({2.0f});
  x.step(sgd, {1.0f}, 0.1f);
  EXPECT_NEAR(x.p(0), 1.8f, 1e-6);
  x.step(sgd, {1.0f}, 0.1f);
  EXPECT_NEAR(x.p(0), 1.51f, 1e-6);
}

TEST(Sgd, Nesterov) {
  // mu 0.5, wd 0.5, lr 0.1, p 2, g 1:
  //   step 1: g' = 2, buf = 2, d = 2 + 0.5 * 2 = 3, p = 2 - 0.3 = 1.7
  //   step 2: g' = 1 + 0.85 = 1.85, buf = 1 + 1.85 = 2.85, d = 1.85 + 1.425 = 3.275,
  //           p = 1.7 - 0.3275 = 1.3725
  Sgd sgd({.momentum = 0.5f, .nesterov = true, .weight_decay = 0.5f});
  Problem x({2.0f});
  x.step(sgd, {1.0f}, 0.1f);
  EXPECT_NEAR(x.p(0), 1.7f, 1e-6);
  x.step(sgd, {1.0f}, 0.1f);
  EXPECT_NEAR(x.p(0), 1.3725f, 1e-6);
}

TEST(Adagrad, TwoSteps) {
  // lr 0.1, p 1, g 2 then 1:
  //   step 1: sum 4, p = 1 - 0.1 * 2 / 2 = 0.9
  //   step 2: sum 5, p = 0.9 - 0.1 / sqrt(5) = 0.85527864
  Adagrad adagrad({});
  Problem x({1.0f});
  x.step(adagrad, {2.0f}, 0.1f);
  EXPECT_NEAR(x.p(0), 0.9f, 1e-6);
  x.step(adagrad, {1.0f}, 0.1f);
  EXPECT_NEAR(x.p(0), 0.85527864f, 1e-6);
}

TEST(Adagrad, LrDecayAndWeightDecay) {
  // lr_decay 0.5: step 2 uses clr = 0.1 / (1 + 0.5) -> p = 0.9 - 0.0666667 / sqrt(5) = 0.87018576
  Adagrad decayed(
      {.lr_decay = 0.5f, .weight_decay = 0.0f, .initial_accumulator = 0.0f, .eps = 1e-10f});
  Problem x({1.0f});
  x.step(decayed, {2.0f}, 0.1f);
  x.step(decayed, {1.0f}, 0.1f);
  EXPECT_NEAR(x.p(0), 0.87018576f, 1e-6);
  // wd 0.1: g' = 2.1, sum 4.41, p = 0.9; g' = 1 + 0.09 = 1.09, sum 5.5981,
  // p = 0.9 - 0.1 * 1.09 / 2.3660304 = 0.85393128
  Adagrad l2({.lr_decay = 0.0f, .weight_decay = 0.1f, .initial_accumulator = 0.0f, .eps = 1e-10f});
  Problem y({1.0f});
  y.step(l2, {2.0f}, 0.1f);
  EXPECT_NEAR(y.p(0), 0.9f, 1e-6);
  y.step(l2, {1.0f}, 0.1f);
  EXPECT_NEAR(y.p(0), 0.85393128f, 1e-6);
}

TEST(Adagrad, InitialAccumulator) {
  // sum starts at 5: 5 + 4 = 9, p = 1 - 0.3 * 2 / 3 = 0.8
  Adagrad adagrad(
      {.lr_decay = 0.0f, .weight_decay = 0.0f, .initial_accumulator = 5.0f, .eps = 1e-10f});
  Problem x({1.0f});
  x.step(adagrad, {2.0f}, 0.3f);
  EXPECT_NEAR(x.p(0), 0.8f, 1e-6);
}

TEST(Adam, ThreeSteps) {
  // lr 0.1, betas 0.9/0.999, p 1, g 1, -1, 2:
  //   step 1: m 0.1, v 0.001, m^ = 1, v^ = 1: p = 1 - 0.1 = 0.9 (the first step moves lr)
  //   step 2: m = 0.09 - 0.1 = -0.01, v = 0.000999 + 0.001 = 0.001999,
  //           m^ = -0.01 / 0.19 = -0.0526316, v^ = 0.001999 / 0.001999 = 1: p = 0.90526316
  //   step 3: m = -0.009 + 0.2 = 0.191, v = 0.001997001 + 0.004 = 0.005997001,
  //           m^ = 0.191 / 0.271 = 0.7047970, v^ = 0.005997001 / 0.002997001 = 2.0010007,
  //           p = 0.90526316 - 0.1 * 0.7047970 / 1.4145673 = 0.85543894
  Adam adam({});
  Problem x({1.0f});
  x.step(adam, {1.0f}, 0.1f);
  EXPECT_NEAR(x.p(0), 0.9f, 1e-6);
  x.step(adam, {-1.0f}, 0.1f);
  EXPECT_NEAR(x.p(0), 0.90526316f, 1e-6);
  x.step(adam, {2.0f}, 0.1f);
  EXPECT_NEAR(x.p(0), 0.85543894f, 1e-6);
  EXPECT_EQ(adam.steps_taken(0), 3);
}

TEST(Adam, L2WeightDecay) {
  // wd 0.1, p 1, g 1, 1: step 1 moves lr (p 0.9); step 2: g' = 1.09, m = 0.099 + 0.109 = 0.208,
  // v = 0.00120879 + 0.00118810 = 0.00239689, m^ = 1.0947368, v^ = 1.1990445,
  // p = 0.9 - 0.1 * 1.0947368 / 1.0950089 = 0.80002485
  Adam adam({.beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.1f});
  Problem x({1.0f});
  x.step(adam, {1.0f}, 0.1f);
  EXPECT_NEAR(x.p(0), 0.9f, 1e-6);
  x.step(adam, {1.0f}, 0.1f);
  EXPECT_NEAR(x.p(0), 0.80002485f, 1e-6);
}

namespace {

// f(p) = 0.5 * sum a_i (p_i - c_i)^2 with gradient a_i (p_i - c_i).
struct Quadratic {
  std::vector<float> a = {1.0f, 4.0f, 0.5f}, c = {3.0f, -2.0f, 0.5f};
  void gradient(const Problem& x, std::vector<float>& g) const {
    for (std::size_t i = 0; i < a.size(); ++i) g[i] = a[i] * (x.p(static_cast<int>(i)) - c[i]);
  }
};

}  // namespace

TEST(Sgd, QuadraticFollowsTheClosedForm) {
  // Without momentum each coordinate contracts exactly: p_k - c = (1 - lr a)^k (p_0 - c).
  Quadratic q;
  Problem x({0.0f, 0.0f, 0.0f});
  Sgd sgd({});
  std::vector<float> g(3);
  const float lr = 0.2f;
  for (int k = 1; k <= 20; ++k) {
    q.gradient(x, g);
    x.step(sgd, g, lr);
    for (int i = 0; i < 3; ++i) {
      const double expected = q.c[static_cast<std::size_t>(i)] +
                              std::pow(1.0 - lr * q.a[static_cast<std::size_t>(i)], k) *
                                  (0.0 - q.c[static_cast<std::size_t>(i)]);
      EXPECT_NEAR(x.p(i), expected, 1e-5) << "step " << k << " coordinate " << i;
    }
  }
}

TEST(Sgd, MomentumConvergesToTheMinimum) {
  Quadratic q;
  Problem x({0.0f, 0.0f, 0.0f});
  Sgd sgd({.momentum = 0.9f, .nesterov = false, .weight_decay = 0.0f});
  std::vector<float> g(3);
  for (int k = 0; k < 500; ++k) {
    q.gradient(x, g);
    x.step(sgd, g, 0.05f);
  }
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(x.p(i), q.c[static_cast<std::size_t>(i)], 1e-4);
}

TEST(Adam, ConvergesToTheMinimumWithADecayingRate) {
  Quadratic q;
  Problem x({0.0f, 0.0f, 0.0f});
  Adam adam({});
  const LrSchedule schedule = LrSchedule::exponential(0.1, 200, 0.5);
  std::vector<float> g(3);
  for (int k = 0; k < 3000; ++k) {
    q.gradient(x, g);
    x.step(adam, g, static_cast<float>(schedule.at(k, 0)));
  }
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(x.p(i), q.c[static_cast<std::size_t>(i)], 1e-3);
}

TEST(Adagrad, ConvergesToTheMinimum) {
  Quadratic q;
  Problem x({0.0f, 0.0f, 0.0f});
  Adagrad adagrad({});
  std::vector<float> g(3);
  for (int k = 0; k < 2000; ++k) {
    q.gradient(x, g);
    x.step(adagrad, g, 0.5f);
  }
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(x.p(i), q.c[static_cast<std::size_t>(i)], 1e-3);
}

TEST(Optimizer, LargeTensorsUpdateLikeSmallOnes) {
  // Above the threshold the update runs on several threads; every element must get exactly
  // the update the single-threaded small case gives it.
  const std::int64_t n = 300000;
  Adam big_adam({});
  ParameterSet params, grads;
  params.set(0, Tensor({n}));
  grads.set(0, Tensor({n}));
  for (std::int64_t i = 0; i < n; ++i) {
    params.at(0).f32()[i] = static_cast<float>(i % 7) - 3.0f;
    grads.at(0).f32()[i] = static_cast<float>(i % 5) - 2.0f;
  }
  const std::vector<ValueId> ids = {0};
  big_adam.step(params, grads, ids, 0.01f);
  big_adam.step(params, grads, ids, 0.01f);
  for (int r = 0; r < 35; ++r) {  // each (i % 7, i % 5) combination
    Adam small_adam({});
    Problem x({static_cast<float>(r % 7) - 3.0f});
    x.step(small_adam, {static_cast<float>(r % 5) - 2.0f}, 0.01f);
    x.step(small_adam, {static_cast<float>(r % 5) - 2.0f}, 0.01f);
    for (std::int64_t i = r; i < n; i += 35) ASSERT_EQ(params.at(0).f32()[i], x.p(0)) << i;
  }
}

namespace {

graph::Graph two_layer_graph() {
  graph::GraphBuilder b("opt_test");
  ValueId x = b.input("x", {3});
  b.output(b.linear(b.relu(b.linear(x, 4, "fc1")), 2, "fc2"));
  return b.finish();
}

// Fills every gradient with a value that depends on the step, the parameter and the element.
void fake_gradients(const graph::Graph& g, ParameterSet& grads, int step) {
  for (ValueId id : g.parameters())
    for (std::int64_t i = 0; i < grads.at(id).numel(); ++i)
      grads.at(id).f32()[i] = std::sin(static_cast<float>(step * 31 + id * 7 + i));
}

bool same_bytes(const ParameterSet& a, const ParameterSet& b, const std::vector<ValueId>& ids) {
  for (ValueId id : ids)
    if (std::memcmp(a.at(id).raw(), b.at(id).raw(), a.at(id).nbytes()) != 0) return false;
  return true;
}

}  // namespace

TEST(Optimizer, StateRoundTripContinuesExactly) {
  for (const char* name : {"sgd", "adagrad", "adam"}) {
    const graph::Graph g = two_layer_graph();
    OptimizerOptions options;
    options.name = name;
    if (options.name == "sgd") options.momentum = 0.9f, options.nesterov = true;
    auto straight = make_optimizer(options);
    auto first_half = make_optimizer(options);
    auto second_half = make_optimizer(options);
    ParameterSet p_straight = ParameterSet::initialize(g, 1);
    ParameterSet p_resumed = ParameterSet::initialize(g, 1);
    ParameterSet grads = ParameterSet::zeros_like_parameters(g);
    const std::vector<ValueId> ids = g.parameters();
    for (int s = 0; s < 6; ++s) {
      fake_gradients(g, grads, s);
      straight->step(p_straight, grads, ids, 0.05f);
      (s < 3 ? first_half : second_half)->step(p_resumed, grads, ids, 0.05f);
      if (s == 2) {
        // Hand the state over through its named-tensor form, as a checkpoint does.
        NamedTensors saved;
        for (const NamedTensor& t : first_half->state(g))
          saved.push_back({t.name, t.tensor.clone()});
        second_half->load_state(g, saved);
      }
    }
    EXPECT_TRUE(same_bytes(p_straight, p_resumed, ids)) << name;
  }
}

TEST(Optimizer, StateNamesSayParameterAndSlot) {
  const graph::Graph g = two_layer_graph();
  Adam adam({});
  ParameterSet params = ParameterSet::initialize(g, 1);
  ParameterSet grads = ParameterSet::zeros_like_parameters(g);
  EXPECT_TRUE(adam.state(g).empty());
  adam.step(params, grads, g.parameters(), 0.1f);
  std::set<std::string> names;
  for (const NamedTensor& t : adam.state(g)) names.insert(t.name);
  EXPECT_TRUE(names.contains("fc1.weight/exp_avg"));
  EXPECT_TRUE(names.contains("fc1.weight/exp_avg_sq"));
  EXPECT_TRUE(names.contains("fc2.bias/step"));
  EXPECT_EQ(names.size(), 4u * 3u);
}

TEST(Optimizer, BadStateIsRejectedWithoutChangingAnything) {
  const graph::Graph g = two_layer_graph();
  Adam adam({});
  ParameterSet params = ParameterSet::initialize(g, 1);
  ParameterSet grads = ParameterSet::zeros_like_parameters(g);
  adam.step(params, grads, g.parameters(), 0.1f);
  const ValueId fc1 = g.value_id("fc1.weight");
  expect_error(
      [&] {
        adam.load_state(g, {{"fc9.weight/exp_avg", Tensor({4, 3})}});
      },
      {"fc9.weight", "does not have"});
  expect_error(
      [&] {
        adam.load_state(g, {{"fc1.weight/momentum_buffer", Tensor({4, 3})}});
      },
      {"momentum_buffer", "another optimizer"});
  expect_error(
      [&] {
        adam.load_state(g, {{"fc1.weight/exp_avg", Tensor({3, 4})}});
      },
      {"fc1.weight/exp_avg", "[3, 4]", "[4, 3]"});
  expect_error([&] { adam.load_state(g, {{"no_slash", Tensor({1})}}); }, {"PARAMETER/SLOT"});
  EXPECT_EQ(adam.steps_taken(fc1), 1);
}

TEST(Optimizer, FactoryNamesAndErrors) {
  EXPECT_EQ(make_optimizer({.name = "sgd"})->name(), "sgd");
  EXPECT_EQ(make_optimizer({.name = "adagrad"})->name(), "adagrad");
  EXPECT_EQ(make_optimizer({.name = "adam"})->name(), "adam");
  expect_error([] { make_optimizer({.name = "adma"}); },
               {"unknown optimizer 'adma'", "did you mean 'adam'", "sgd, adagrad, adam"});
  expect_error([] { make_optimizer({.name = "rmsprop"}); }, {"choose one of: sgd, adagrad, adam"});
  OptimizerOptions adam_with_momentum{.name = "adam", .momentum = 0.9f};
  expect_error([&] { make_optimizer(adam_with_momentum); }, {"adam does not use --momentum"});
  OptimizerOptions nesterov_without_momentum{.name = "sgd", .momentum = 0.0f, .nesterov = true};
  expect_error([&] { make_optimizer(nesterov_without_momentum); }, {"Nesterov", "--momentum"});
  OptimizerOptions negative_decay{
      .name = "sgd", .momentum = 0.0f, .nesterov = false, .weight_decay = -1.0f};
  expect_error([&] { make_optimizer(negative_decay); }, {"weight decay -1", "--weight-decay"});
  OptimizerOptions bad_beta;
  bad_beta.name = "adam";
  bad_beta.beta1 = 1.0f;
  expect_error([&] { make_optimizer(bad_beta); }, {"beta1"});
  EXPECT_NE(make_optimizer({.name = "sgd", .momentum = 0.9f})->describe().find("momentum=0.9"),
            std::string::npos);
}
