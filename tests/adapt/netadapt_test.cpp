// The NetAdapt loop and its channel search: the search on seed 003's Fig. 5.6 numbers (24
// channels; 5 evaluations by bisection, 10 by the linear scan) and, on random monotone
// resources, that bisection always answers as the linear scan does; the loop on a small CNN
// with MACs and parameters as the resource: every iteration's model meets its constraint,
// channel counts are multiples of --round-to, the candidate kept is the one the reference's
// ratio rule picks, the budget ends the loop, the adapted graph is rebuilt from its channel
// counts, and diverging candidates are dropped.
#include "adapt/netadapt.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "adapt/channel_search.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/threads.hpp"
#include "graph/cost.hpp"
#include "graph/zoo/zoo.hpp"
#include "train/data/synthetic.hpp"

using namespace telar;
using namespace telar::adapt;

namespace {

// Fig. 5.6: channels 96 ... 8 in steps of 8 and their latencies; the constraint is 0.5.
const std::vector<std::int64_t> kChannels = {96, 88, 80, 72, 64, 56, 48, 40, 32, 24, 16, 8};
const std::vector<double> kLatency = {1.4, 1.12, 1.0,  0.9,  0.85, 0.8,
                                      0.7, 0.61, 0.57, 0.48, 0.42, 0.29};

double fig56(std::int64_t channels) {
  for (std::size_t i = 0; i < kChannels.size(); ++i)
    if (kChannels[i] == channels) return kLatency[i];
  ADD_FAILURE() << "no latency for " << channels;
  return 0;
}

TEST(ChannelSearch, Figure56BisectionNeedsFiveEvaluationsWhereTheLinearScanNeedsTen) {
  const SearchResult linear = find_channels(kChannels, fig56, 0.5, ChannelSearch::Linear);
  EXPECT_EQ(linear.channels, 24);
  EXPECT_DOUBLE_EQ(linear.resource, 0.48);
  EXPECT_EQ(linear.evaluations, 10);
  const SearchResult bisection =
      find_channels(kChannels, fig56, 0.5, ChannelSearch::Bisection, /*threshold=*/1);
  EXPECT_EQ(bisection.channels, 24);
  EXPECT_EQ(bisection.evaluations, 5);
  // Nothing below 0.2: no count.
  EXPECT_FALSE(find_channels(kChannels, fig56, 0.2, ChannelSearch::Bisection, 1).channels);
  EXPECT_FALSE(find_channels({}, fig56, 0.5, ChannelSearch::Linear).channels);
  EXPECT_EQ(parse_search("linear"), ChannelSearch::Linear);
  EXPECT_THROW(parse_search("binary"), Error);
}

TEST(ChannelSearch, BisectionAnswersAsTheLinearScanWhereTheResourceIsMonotone) {
  Rng rng(5);
  for (int trial = 0; trial < 500; ++trial) {
    const std::size_t n = 1 + rng.below(60);
    std::vector<std::int64_t> channels(n);
    std::vector<double> resource(n);
    double r = 10.0;
    for (std::size_t i = 0; i < n; ++i) {
      channels[i] = static_cast<std::int64_t>(8 * (n - i));
      r -= rng.uniform() < 0.2 ? 0.0 : rng.uniform();  // flat steps too
      resource[i] = r;
    }
    const auto f = [&](std::int64_t c) { return resource[n - static_cast<std::size_t>(c / 8)]; };
    const double constraint = 10.0 - rng.uniform() * 12.0;
    for (int threshold : {1, 2, 16}) {
      const auto a = find_channels(channels, f, constraint, ChannelSearch::Linear);
      const auto b = find_channels(channels, f, constraint, ChannelSearch::Bisection, threshold);
      ASSERT_EQ(a.channels, b.channels) << "trial " << trial << " threshold " << threshold;
      if (n > 40 && threshold == 1 && a.channels && *a.channels < 80) {
        EXPECT_LT(b.evaluations, a.evaluations);
      }
    }
  }
}

// A timed latency is noisy: a count taken at its first figure under the constraint may have met
// it by chance. Confirmed, the scan takes a count only when a second figure is under the
// constraint too, and goes on past one that was not.
TEST(ChannelSearch, ATimedFigureUnderTheConstraintIsTakenOnlyWhenASecondOneIsToo) {
  const std::vector<std::int64_t> counts = {32, 24, 16, 8};
  // Each count's figures, in the order they are asked for: 24 meets 0.5 once (0.45) and not
  // again (0.6); 16 meets it twice (0.40 and 0.44).
  std::map<std::int64_t, std::vector<double>> figures;
  const auto scripted = [&](std::int64_t n) {
    std::vector<double>& left = figures.at(n);
    if (left.empty()) {
      ADD_FAILURE() << "count " << n << " evaluated more often than scripted";
      return 0.0;
    }
    const double f = left.front();
    left.erase(left.begin());
    return f;
  };
  figures = {{32, {0.7}}, {24, {0.45, 0.6}}, {16, {0.40, 0.44}}, {8, {}}};
  const SearchResult twice =
      find_channels(counts, scripted, 0.5, ChannelSearch::Linear, 16, Confirm::Twice);
  EXPECT_EQ(twice.channels, 16);
  EXPECT_DOUBLE_EQ(twice.resource, 0.42);  // the mean of 0.40 and 0.44
  EXPECT_EQ(twice.evaluations, 5);
  EXPECT_EQ(twice.unconfirmed, 1);
  // Once (a table, a simulator, a count): the first figure under the constraint is taken.
  figures = {{32, {0.7}}, {24, {0.45, 0.6}}, {16, {}}, {8, {}}};
  const SearchResult once = find_channels(counts, scripted, 0.5, ChannelSearch::Linear);
  EXPECT_EQ(once.channels, 24);
  EXPECT_DOUBLE_EQ(once.resource, 0.45);
  EXPECT_EQ(once.evaluations, 2);
  EXPECT_EQ(once.unconfirmed, 0);
  // A figure that does not vary is confirmed: Fig. 5.6's answer, with one evaluation more.
  const SearchResult fig =
      find_channels(kChannels, fig56, 0.5, ChannelSearch::Bisection, 1, Confirm::Twice);
  EXPECT_EQ(fig.channels, 24);
  EXPECT_EQ(fig.evaluations, 6);
  // Only latencies timed on a machine vary from one measurement to the next.
  EXPECT_TRUE(ResourceMeter(ResourceKind::Latency, "cpu").timed());
  EXPECT_FALSE(ResourceMeter(ResourceKind::Latency, "sim:configs/tpu_16_16_pes.cfg").timed());
  EXPECT_FALSE(ResourceMeter(ResourceKind::Macs).timed());
  EXPECT_FALSE(ResourceMeter(ResourceKind::Params).timed());
}

struct Fixture {
  graph::Graph model;
  graph::ParameterSet weights;
  AdaptData data;
};

Fixture small_cnn() {
  Fixture f;
  graph::zoo::ModelOptions o;
  o.input = Shape{1, 12, 12};
  f.model = graph::zoo::build("mnist_cnn", o);
  f.weights = graph::ParameterSet::initialize(f.model, 3);
  train::SyntheticSpec spec{600, {1, 12, 12}, 10, 0.5f, 4, "synthetic"};
  f.data.train = train::make_synthetic_classification(spec, 0);
  spec.samples = 200;
  f.data.test = train::make_synthetic_classification(spec, 1);
  for (std::int64_t i = 0; i < 600; ++i) (i % 5 ? f.data.fine_tune : f.data.held_out).push_back(i);
  return f;
}

NetAdaptOptions quick(double budget) {
  NetAdaptOptions o;
  o.budget = budget;
  o.delta = 0.1;
  o.short_term_iterations = 3;
  o.batch_size = 32;
  o.lr = 0.01;
  return o;
}

// Latency timed on the CPU: the original measured three times (the median sets the budget) at
// the start and again at each later iteration (its figures scaled to the first), every count a
// candidate keeps measured twice; nothing else is measured.
TEST(NetAdapt, ATimedLatencyMeasuresTheOriginalThriceAnIterationAndConfirmsEachCount) {
  Fixture f = small_cnn();
  const ResourceMeter latency(ResourceKind::Latency, "cpu", backend::Precision::FP32,
                              {0.0, 0.005, 3});
  NetAdaptOptions o = quick(0.3);
  o.max_iterations = 2;
  o.short_term_iterations = 1;
  const AdaptResult r =
      net_adapt(f.model, f.weights, graph::LossKind::CrossEntropy, f.data, latency, o);
  ASSERT_GE(r.iterations.size(), 1u);
  std::int64_t evaluations = 0;
  for (const Iteration& it : r.iterations)
    for (const Candidate& c : it.candidates) {
      evaluations += c.evaluations;
      if (c.channels_after > 0) {
        EXPECT_GE(c.evaluations, 2) << c.layers;
      }
    }
  EXPECT_EQ(latency.calls(), 3 * static_cast<std::int64_t>(r.iterations.size()) + evaluations);
}

TEST(NetAdapt, MacsFallToTheBudgetThroughConstraintsTheRatioRuleAndMultiplesOfEight) {
  Fixture f = small_cnn();
  const ResourceMeter macs(ResourceKind::Macs);
  const auto count = [](const graph::Graph& g) {
    return static_cast<double>(graph::graph_cost(g, {1, 1.0}).macs);
  };
  int seen = 0;
  AdaptObserver observer;
  observer.iteration_done = [&](const Iteration& it, const AdaptedModel& m) {
    ++seen;
    EXPECT_DOUBLE_EQ(m.resource, count(m.graph));
    EXPECT_LT(m.resource, it.constraint);
  };
  const AdaptResult r = net_adapt(f.model, f.weights, graph::LossKind::CrossEntropy, f.data, macs,
                                  quick(0.5), observer);
  const double r0 = count(f.model);
  EXPECT_DOUBLE_EQ(r.original.resource, r0);
  ASSERT_TRUE(r.budget_met) << r.stopped;
  EXPECT_LE(r.adapted.resource, 0.5 * r0);
  EXPECT_EQ(seen, static_cast<int>(r.iterations.size()));
  double previous = r0, previous_accuracy = r.original.accuracy;
  for (const Iteration& it : r.iterations) {
    // The constraint: the resource before, less δ·R0·decay^k.
    EXPECT_NEAR(it.constraint, previous - 0.1 * r0 * std::pow(0.96, it.index), 1e-6 * r0);
    ASSERT_GE(it.chosen, 0);
    // The rule, recomputed: the least (acc_prev − acc + 1e-6) / (Δres / R0 + 1e-5).
    double best = std::numeric_limits<double>::infinity();
    int argmin = -1;
    for (std::size_t i = 0; i < it.candidates.size(); ++i) {
      const Candidate& c = it.candidates[i];
      if (c.channels_after == 0) continue;
      EXPECT_EQ(c.channels_after % 8, 0) << c.layers;
      EXPECT_LT(c.channels_after, c.channels_before);
      EXPECT_LT(c.resource, it.constraint);
      const double ratio =
          (previous_accuracy - c.accuracy + 1e-6) / ((previous - c.resource) / r0 + 1e-5);
      if (ratio < best) {
        best = ratio;
        argmin = static_cast<int>(i);
      }
    }
    EXPECT_EQ(it.chosen, argmin) << "iteration " << it.index;
    EXPECT_LT(it.resource, previous);
    previous = it.resource;
    previous_accuracy = it.accuracy;
  }
  // The checkpoint's record rebuilds the adapted graph from the original.
  const graph::Graph rebuilt = with_channel_counts(f.model, channel_counts(r.adapted.graph));
  EXPECT_EQ(rebuilt.parameter_count(), r.adapted.graph.parameter_count());
  EXPECT_DOUBLE_EQ(count(rebuilt), r.adapted.resource);
  EXPECT_THROW(with_channel_counts(f.model, {{"relu1", 8}}), Error);
  EXPECT_GE(r.test_accuracy, 0.0);
}

TEST(NetAdapt, ParametersAsTheResourceAndLinearSearchGiveTheSameModelAsBisection) {
  Fixture f = small_cnn();
  const ResourceMeter params(ResourceKind::Params);
  NetAdaptOptions o = quick(0.6);
  o.short_term_iterations = 0;  // no fine-tuning: both searches must pick the same channels
  const AdaptResult bisection =
      net_adapt(f.model, f.weights, graph::LossKind::CrossEntropy, f.data, params, o);
  o.search = ChannelSearch::Linear;
  const AdaptResult linear =
      net_adapt(f.model, f.weights, graph::LossKind::CrossEntropy, f.data, params, o);
  EXPECT_EQ(channel_counts(bisection.adapted.graph), channel_counts(linear.adapted.graph));
  EXPECT_DOUBLE_EQ(bisection.adapted.resource,
                   static_cast<double>(bisection.adapted.graph.parameter_count()));
  int evaluations_b = 0, evaluations_l = 0;
  for (const Iteration& it : bisection.iterations)
    for (const Candidate& c : it.candidates) evaluations_b += c.evaluations;
  for (const Iteration& it : linear.iterations)
    for (const Candidate& c : it.candidates) evaluations_l += c.evaluations;
  EXPECT_LT(evaluations_b, evaluations_l);
}

TEST(NetAdapt, AHybridChoosesItsFirstIterationsByTheHighestScoreWithoutFineTuning) {
  Fixture f = small_cnn();
  const ResourceMeter macs(ResourceKind::Macs);
  for (CandidateScore score : {CandidateScore::Naswot, CandidateScore::Synflow}) {
    SCOPED_TRACE(score_name(score));
    NetAdaptOptions o = quick(0.5);
    o.score = score;
    o.hybrid = 50;
    const int by_score = score_iterations(o);
    ASSERT_GE(by_score, 1);
    const AdaptResult r =
        net_adapt(f.model, f.weights, graph::LossKind::CrossEntropy, f.data, macs, o);
    ASSERT_TRUE(r.budget_met) << r.stopped;
    for (const Iteration& it : r.iterations) {
      EXPECT_EQ(it.by_score, it.index < by_score);
      ASSERT_GE(it.chosen, 0);
      if (!it.by_score) continue;
      double best = -std::numeric_limits<double>::infinity();
      for (const Candidate& c : it.candidates) {
        if (c.channels_after == 0) continue;
        EXPECT_EQ(c.fine_tune_seconds, 0.0) << "a scored candidate is not fine-tuned";
        EXPECT_TRUE(std::isnan(c.accuracy));
        EXPECT_TRUE(std::isfinite(c.score));
        best = std::max(best, c.score);
      }
      EXPECT_EQ(it.candidates[static_cast<std::size_t>(it.chosen)].score, best);
    }
    EXPECT_TRUE(std::isfinite(r.adapted.accuracy));
  }
}

// --tune-chosen: in the iterations a score chooses, the chosen candidate is fine-tuned, the
// others are not; the network it hands on is trained (its weights differ from the untuned
// hybrid's, the same choices made from the same start).
TEST(NetAdapt, TuneChosenFineTunesOnlyTheCandidateAScoreChose) {
  Fixture f = small_cnn();
  const ResourceMeter macs(ResourceKind::Macs);
  NetAdaptOptions o = quick(0.5);
  o.score = CandidateScore::Naswot;  // every iteration by the score
  o.max_iterations = 1;
  const AdaptResult plain =
      net_adapt(f.model, f.weights, graph::LossKind::CrossEntropy, f.data, macs, o);
  o.tune_chosen = true;
  const AdaptResult tuned =
      net_adapt(f.model, f.weights, graph::LossKind::CrossEntropy, f.data, macs, o);
  ASSERT_EQ(tuned.iterations.size(), 1u);
  const Iteration& it = tuned.iterations[0];
  ASSERT_TRUE(it.by_score);
  ASSERT_GE(it.chosen, 0);
  EXPECT_EQ(it.chosen, plain.iterations[0].chosen);
  for (std::size_t i = 0; i < it.candidates.size(); ++i) {
    if (static_cast<int>(i) == it.chosen)
      EXPECT_GT(it.candidates[i].fine_tune_seconds, 0.0);
    else
      EXPECT_EQ(it.candidates[i].fine_tune_seconds, 0.0);
  }
  bool differ = false;
  for (graph::ValueId id : tuned.adapted.graph.parameters()) {
    const auto a = tuned.adapted.weights.at(id).span<float>();
    const auto b = plain.adapted.weights.at(id).span<float>();
    for (std::size_t j = 0; j < a.size(); ++j) differ = differ || a[j] != b[j];
  }
  EXPECT_TRUE(differ);
  NetAdaptOptions no_score = quick(0.5);
  no_score.tune_chosen = true;
  EXPECT_THROW(check_options(no_score), Error);
}

// Candidates fine-tuned two at a time, each on one of two threads, are the candidates fine-tuned
// one after the other on one thread: the same accuracies to the bit, the same choices. The
// diverging case drops every candidate on the workers too.
TEST(NetAdapt, CandidatesSideBySideChooseAsOneAtATimeOnTheSameThreads) {
  Fixture f = small_cnn();
  const ResourceMeter macs(ResourceKind::Macs);
  const int threads = compute_threads();
  set_compute_threads(2);
  NetAdaptOptions o = quick(0.5);
  o.backend = "cpu:threads=1";
  const AdaptResult one =
      net_adapt(f.model, f.weights, graph::LossKind::CrossEntropy, f.data, macs, o);
  o.backend = "cpu";
  o.parallel = 2;
  const AdaptResult two =
      net_adapt(f.model, f.weights, graph::LossKind::CrossEntropy, f.data, macs, o);
  o.lr = 1e30;
  const AdaptResult diverged =
      net_adapt(f.model, f.weights, graph::LossKind::CrossEntropy, f.data, macs, o);
  set_compute_threads(threads);
  ASSERT_TRUE(one.budget_met) << one.stopped;
  ASSERT_EQ(one.iterations.size(), two.iterations.size());
  for (std::size_t i = 0; i < one.iterations.size(); ++i) {
    const Iteration &a = one.iterations[i], &b = two.iterations[i];
    ASSERT_EQ(a.candidates.size(), b.candidates.size());
    ASSERT_GE(a.candidates.size(), 2u);
    EXPECT_EQ(a.chosen, b.chosen) << "iteration " << i;
    for (std::size_t c = 0; c < a.candidates.size(); ++c) {
      EXPECT_EQ(a.candidates[c].channels_after, b.candidates[c].channels_after);
      EXPECT_TRUE(std::isfinite(b.candidates[c].accuracy)) << b.candidates[c].layers;
      EXPECT_EQ(a.candidates[c].accuracy, b.candidates[c].accuracy) << b.candidates[c].layers;
      EXPECT_GT(b.candidates[c].fine_tune_seconds, 0.0);
    }
  }
  EXPECT_EQ(channel_counts(one.adapted.graph), channel_counts(two.adapted.graph));
  EXPECT_EQ(one.test_accuracy, two.test_accuracy);
  ASSERT_EQ(diverged.iterations.size(), 1u);
  EXPECT_EQ(diverged.iterations[0].chosen, -1);
  for (const Candidate& c : diverged.iterations[0].candidates)
    EXPECT_NE(c.note.find("diverged"), std::string::npos) << c.note;
}

TEST(NetAdapt, DivergingCandidatesAreDroppedAndBadOptionsRefused) {
  Fixture f = small_cnn();
  const ResourceMeter macs(ResourceKind::Macs);
  NetAdaptOptions o = quick(0.5);
  o.lr = 1e30;  // every fine-tune diverges
  const AdaptResult r =
      net_adapt(f.model, f.weights, graph::LossKind::CrossEntropy, f.data, macs, o);
  ASSERT_EQ(r.iterations.size(), 1u);
  EXPECT_EQ(r.iterations[0].chosen, -1);
  for (const Candidate& c : r.iterations[0].candidates)
    EXPECT_NE(c.note.find("diverged"), std::string::npos) << c.note;
  EXPECT_FALSE(r.budget_met);
  EXPECT_DOUBLE_EQ(r.adapted.resource, r.original.resource);

  for (const auto& bad : std::vector<std::function<void(NetAdaptOptions&)>>{
           [](NetAdaptOptions& x) { x.budget = 0; }, [](NetAdaptOptions& x) { x.budget = 1; },
           [](NetAdaptOptions& x) { x.delta = 0; }, [](NetAdaptOptions& x) { x.decay = 0; },
           [](NetAdaptOptions& x) { x.max_iterations = 0; },
           [](NetAdaptOptions& x) { x.round_to = 0; }, [](NetAdaptOptions& x) { x.parallel = 0; },
           [](NetAdaptOptions& x) {
             x.parallel = 2;
             x.backend = "cpu:ref";
           }}) {
    NetAdaptOptions b = quick(0.5);
    bad(b);
    EXPECT_THROW(check_options(b), Error);
  }
  // A model with nothing to prune.
  graph::zoo::ModelOptions mo;
  const graph::Graph single = graph::zoo::build("mlp:144-10", mo);
  EXPECT_THROW(net_adapt(single, graph::ParameterSet::initialize(single, 1),
                         graph::LossKind::CrossEntropy, f.data, macs, quick(0.5)),
               Error);
}

}  // namespace
