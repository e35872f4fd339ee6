#include "adapt/netadapt.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include "adapt/scores.hpp"
#include "backend/backend.hpp"
#include "backend/inference.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/threads.hpp"
#include "train/data/data_loader.hpp"
#include "train/evaluate.hpp"
#include "train/optim/lr_schedule.hpp"
#include "train/optim/sgd.hpp"
#include "train/trainer.hpp"

namespace telar::adapt {

namespace {

double seconds_since(std::int64_t start_ns) {
  return static_cast<double>(now_ns() - start_ns) * 1e-9;
}

// Fine-tuning and evaluation of candidates: `fine_tune` trains `weights` of `model` in place
// (SGD with momentum 0.9 and weight decay 1e-4, the reference's) on the fine-tuning samples, in
// the loader's order from `seed`; `accuracy` evaluates a model on samples of a data set,
// compiled for inference.
class FineTuner {
 public:
  FineTuner(graph::LossKind loss, const AdaptData& data, const NetAdaptOptions& options,
            std::string backend)
      : loss_(loss), data_(data), options_(options), backend_(std::move(backend)) {}

  void fine_tune(const graph::Graph& model, graph::ParameterSet& weights, std::int64_t batches,
                 int epochs, std::uint64_t seed) const {
    if (batches <= 0 && epochs <= 0) return;
    const graph::Graph g = graph::with_loss(model, loss_);
    auto exe = backend::compile(backend::parse_backend_spec(backend_), g, weights, {seed});
    train::DataLoader loader(data_.train, data_.fine_tune,
                             {options_.batch_size, true, false, seed});
    train::TrainerOptions to;
    if (batches > 0) {
      // `batches` in all, split evenly over whole epochs (rounded up).
      const std::int64_t per_epoch = loader.batches_per_epoch();
      to.epochs = static_cast<int>((batches + per_epoch - 1) / per_epoch);
      to.limit_batches = (batches + to.epochs - 1) / to.epochs;
    } else {
      to.epochs = epochs;
    }
    train::Sgd sgd({0.9f, false, 1e-4f});
    train::Trainer trainer(*exe, weights, sgd, train::LrSchedule::constant(options_.lr), to);
    trainer.fit(loader, nullptr);
  }

  double accuracy(const graph::Graph& model, graph::ParameterSet& weights,
                  const train::Dataset& set, const std::vector<std::int64_t>& indices) const {
    const graph::Graph g = graph::with_loss(model, loss_);
    // Compiled for inference (BatchNorm folded, activations fused), as telar eval runs it.
    auto exe = backend::compile_for_inference(backend::parse_backend_spec(backend_), g, weights);
    train::DataLoader loader(set, indices, {256, false, false, 0});
    return train::evaluate_classifier(*exe, loader).accuracy;
  }

 private:
  graph::LossKind loss_;
  const AdaptData& data_;
  const NetAdaptOptions& options_;
  std::string backend_;
};

// The seed of the fine-tune of group `group`'s candidate in iteration `k` (its batches' order).
std::uint64_t fine_tune_seed(const NetAdaptOptions& options, int k, int group) {
  return options.seed + static_cast<std::uint64_t>(k) * 7919 + static_cast<std::uint64_t>(group);
}

// A candidate waiting for its short-term fine-tune and evaluation: its index in the iteration
// and its fine-tuning seed.
struct TuneJob {
  std::size_t candidate = 0;
  std::uint64_t seed = 0;
};

// Fine-tunes and evaluates one candidate (its model in place); a diverged one is dropped.
void tune_and_evaluate(const FineTuner& tuner, const AdaptData& data,
                       const NetAdaptOptions& options, const TuneJob& job, Candidate& c,
                       AdaptedModel& m) {
  std::int64_t start_ns = now_ns();
  try {
    tuner.fine_tune(m.graph, m.weights, options.short_term_iterations, 0, job.seed);
  } catch (const train::NonFiniteLoss& e) {
    // Dropped: a diverged candidate is never chosen.
    c.fine_tune_seconds = seconds_since(start_ns);
    c.accuracy = std::numeric_limits<double>::quiet_NaN();
    c.note = fmt::format("fine-tune diverged ({})", e.what());
    m = AdaptedModel();
    return;
  }
  c.fine_tune_seconds = seconds_since(start_ns);
  start_ns = now_ns();
  m.accuracy = tuner.accuracy(m.graph, m.weights, data.train, data.held_out);
  c.evaluate_seconds = seconds_since(start_ns);
  c.accuracy = m.accuracy;
}

// The backend each of `workers` parallel fine-tunes runs on: the CPU's compute threads shared
// out between them.
std::string worker_backend(const NetAdaptOptions& options, int workers) {
  if (workers <= 1) return options.backend;
  return fmt::format("cpu:threads={}", std::max(1, compute_threads() / workers));
}

// Runs the jobs, `options.parallel` at a time on as many threads (each its own executables, on
// its share of the cores), or one after the other on options.backend when it is 1. `announce(j)`
// is called (never concurrently) as job j starts. The first error a job throws (an interrupt
// among them) is thrown once every thread has stopped.
void run_jobs(const std::vector<TuneJob>& jobs, graph::LossKind loss, const AdaptData& data,
              const NetAdaptOptions& options, std::vector<Candidate>& candidates,
              std::vector<AdaptedModel>& models,
              const std::function<void(std::size_t job)>& announce) {
  // Every candidate on the same share of the threads, however many the iteration has.
  const std::string backend = worker_backend(options, options.parallel);
  const int workers = static_cast<int>(
      std::min<std::size_t>(static_cast<std::size_t>(options.parallel), jobs.size()));
  if (workers <= 1) {
    const FineTuner one(loss, data, options, backend);
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      if (stop_signal()) return;  // the caller throws Interrupted
      announce(j);
      tune_and_evaluate(one, data, options, jobs[j], candidates[jobs[j].candidate],
                        models[jobs[j].candidate]);
    }
    return;
  }
  std::atomic<std::size_t> next{0};
  std::mutex announcing;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(workers));
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      try {
        const FineTuner tuner(loss, data, options, backend);
        for (std::size_t j = next++; j < jobs.size(); j = next++) {
          if (stop_signal()) return;
          {
            const std::lock_guard<std::mutex> lock(announcing);
            announce(j);
          }
          tune_and_evaluate(tuner, data, options, jobs[j], candidates[jobs[j].candidate],
                            models[jobs[j].candidate]);
        }
      } catch (...) {
        errors[static_cast<std::size_t>(w)] = std::current_exception();
        next = jobs.size();  // the others stop after their candidate
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

std::vector<std::int64_t> all_of(const train::Dataset& set) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(set.size()));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::int64_t>(i);
  return out;
}

}  // namespace

int scheduled_iterations(const NetAdaptOptions& o) {
  // Iteration k removes δ·decay^k of the original: the first k whose sum reaches 1 − budget.
  double removed = 0.0;
  for (int k = 0; k < o.max_iterations; ++k) {
    removed += o.delta * std::pow(o.decay, k);
    if (removed >= 1.0 - o.budget) return k + 1;
  }
  return o.max_iterations;
}

int score_iterations(const NetAdaptOptions& o) {
  if (o.score == CandidateScore::FineTune) return 0;
  const int total = scheduled_iterations(o);
  return total - static_cast<int>(std::lround(total * o.hybrid / 100.0));
}

void check_options(const NetAdaptOptions& o) {
  require(o.budget > 0.0 && o.budget < 1.0,
          "--budget {} is not a fraction of the original resource between 0 and 1 (e.g. 0.5)",
          o.budget);
  require(o.delta > 0.0 && o.delta < 1.0,
          "--delta {} is not a fraction of the original resource between 0 and 1 (e.g. 0.025)",
          o.delta);
  require(o.decay > 0.0 && o.decay <= 1.0, "--decay {} must be in (0, 1] (e.g. 0.96)", o.decay);
  require(o.max_iterations >= 1, "--max-iterations must be at least 1, not {}", o.max_iterations);
  require(o.short_term_iterations >= 0, "--short-term-iterations must be 0 or more, not {}",
          o.short_term_iterations);
  require(o.long_term_epochs >= 0, "--long-term-epochs must be 0 or more, not {}",
          o.long_term_epochs);
  require(o.round_to >= 1, "--round-to must be at least 1, not {}", o.round_to);
  require(o.lr > 0.0 && std::isfinite(o.lr), "--lr must be a positive number, not {}", o.lr);
  require(o.batch_size >= 1, "--batch-size must be at least 1, not {}", o.batch_size);
  require(o.hybrid >= 0 && o.hybrid <= 100,
          "--hybrid {} is not a percentage of iterations (0 to 100, e.g. 30)", o.hybrid);
  require(!o.tune_chosen || o.score != CandidateScore::FineTune,
          "--tune-chosen fine-tunes the candidate a training-free score chose; add --score "
          "naswot (or another score)");
  require(o.hybrid == 0 || o.score != CandidateScore::FineTune,
          "--hybrid chooses the first iterations by a training-free score; add --score naswot "
          "(or grad-norm, params)");
  require(o.score_batch >= 2, "internal: a score needs a batch of 2 samples or more");
  require(o.parallel >= 1 && o.parallel <= max_compute_threads(),
          "--parallel {} is not a number of candidates to fine-tune at once (1 to the core count, "
          "e.g. 2)",
          o.parallel);
  require(o.parallel == 1 || o.backend == "cpu",
          "--parallel fine-tunes candidates side by side on the CPU's cores; it cannot share "
          "backend '{}'",
          o.backend);
}

namespace {

// The resource every constraint and the budget are fractions of. A timed latency is the median
// of three measurements: one disturbed measurement (the demo's CNN, 0.05 s windows, measured
// 0.11 to 0.36 ms in 39 runs whose candidates ran at 0.11 to 0.14) would set them all.
double original_resource(const ResourceMeter& resource, const graph::Graph& model,
                         const graph::ParameterSet& weights) {
  if (!resource.timed()) return resource(model, weights);
  std::vector<double> figures;
  for (int i = 0; i < 3; ++i) figures.push_back(resource(model, weights));
  std::sort(figures.begin(), figures.end());
  return figures[1];
}

}  // namespace

void check_prunable(const graph::Graph& model, std::int64_t round_to) {
  const ChannelGroups groups(model);
  require(!groups.prunable().empty(),
          "{} has no channel group that can be pruned (telar models show {} --prunable says "
          "why)",
          model.name(), model.name());
  std::int64_t widest = 0;
  for (const int g : groups.prunable())
    widest = std::max(widest, groups.groups()[static_cast<std::size_t>(g)].channels);
  require(widest > round_to,
          "{}'s prunable groups have at most {} channels, none more than --round-to {}: nothing "
          "to prune; give a smaller --round-to",
          model.name(), widest, round_to);
}

AdaptResult net_adapt(const graph::Graph& model, const graph::ParameterSet& weights,
                      graph::LossKind loss, const AdaptData& data, const ResourceMeter& resource,
                      const NetAdaptOptions& options, const AdaptObserver& observer,
                      const AdaptStart* start) {
  check_options(options);
  const std::int64_t run_start = now_ns();
  const auto say = [&](const std::string& stage, int done, int total) {
    if (observer.progress) observer.progress(stage, done, total);
  };
  check_prunable(model, options.round_to);

  const FineTuner tuner(loss, data, options, options.backend);
  AdaptResult result;
  result.original.graph = model;
  for (graph::ValueId id : weights.ids()) result.original.weights.set(id, weights.at(id).clone());
  if (start) {
    // Resumed: the original's figures as first measured (a latency measured again would move
    // every later constraint).
    result.original.resource = start->original_resource;
    result.original.accuracy = start->original_accuracy;
  } else {
    say("measuring the original model", 0, 1);
    result.original.resource = original_resource(resource, model, result.original.weights);
    result.original.accuracy =
        tuner.accuracy(model, result.original.weights, data.train, data.held_out);
  }
  const double r0 = result.original.resource;
  if (observer.started) observer.started(result.original);
  require(r0 > 0.0, "the original model's {} is {}: nothing to reduce",
          resource_name(resource.kind()), r0);

  AdaptedModel current{model, {}, result.original.resource, result.original.accuracy};
  if (start) {
    current.graph = start->current.graph;
    for (graph::ValueId id : start->current.weights.ids())
      current.weights.set(id, start->current.weights.at(id).clone());
    current.resource = start->current.resource;
    current.accuracy = start->current.accuracy;
    result.iterations = start->done;
  } else {
    for (graph::ValueId id : weights.ids()) current.weights.set(id, weights.at(id).clone());
  }
  const double budget = options.budget * r0;
  // The batch training-free scores see: the first samples held out, the same for every
  // candidate.
  Tensor score_images, score_labels;
  if (options.score != CandidateScore::FineTune) {
    std::vector<std::int64_t> first(
        data.held_out.begin(),
        data.held_out.begin() +
            std::min<std::ptrdiff_t>(options.score_batch,
                                     static_cast<std::ptrdiff_t>(data.held_out.size())));
    train::DataLoader loader(data.train, first,
                             {static_cast<std::int64_t>(first.size()), false, false, 0});
    const train::Batch& b = loader.batch(0, 0);
    score_images = b.images.clone();
    score_labels = b.labels.clone();
  }
  const int by_score = score_iterations(options);
  result.stopped = fmt::format("reached --max-iterations {}", options.max_iterations);
  // A timed latency's figures are in the units of the original's first measurement: the
  // machine's speed moves (other tenants, its clock), and a constraint set from a figure of a
  // faster minute could only be met by a drastic cut in a slower one. Each iteration after the
  // first measures the original again and scales its own figures by the ratio.
  double scale = 1.0;
  const int first = static_cast<int>(result.iterations.size());
  for (int k = first; k < options.max_iterations; ++k) {
    if (current.resource <= budget) break;
    if (resource.timed() && (k > first || start))
      scale = r0 / original_resource(resource, model, result.original.weights);
    Iteration it;
    it.index = k;
    it.by_score = k < by_score;
    it.constraint = current.resource - options.delta * r0 * std::pow(options.decay, k);
    // The accuracy rule compares with the model kept: after iterations chosen by a score its
    // accuracy is not known yet.
    if (!it.by_score && !std::isfinite(current.accuracy))
      current.accuracy = tuner.accuracy(current.graph, current.weights, data.train, data.held_out);
    const ChannelGroups groups(current.graph);
    const std::vector<int> prunable = groups.prunable();
    std::vector<AdaptedModel> models;
    std::vector<TuneJob> jobs;
    // Asked to stop (the caller's StopOnSignal): between candidates (a fine-tune stops at its
    // next batch by itself). A resumed run does this iteration again from its start.
    const auto stop_if_asked = [k] {
      if (const int signal = stop_signal())
        throw Interrupted(
            fmt::format("interrupted by {} in iteration {}", signal_name(signal), k + 1), signal);
    };
    for (std::size_t gi = 0; gi < prunable.size(); ++gi) {
      stop_if_asked();
      const int g = prunable[gi];
      const ChannelGroup& group = groups.groups()[static_cast<std::size_t>(g)];
      say(fmt::format("iteration {}: {}", k + 1, groups.name(g)), static_cast<int>(gi),
          static_cast<int>(prunable.size()));
      Candidate c;
      c.group = g;
      c.layers = groups.name(g);
      c.channels_before = group.channels;
      // Simplify: the largest multiple of round_to below the count that meets the constraint.
      std::int64_t start_ns = now_ns();
      std::vector<std::int64_t> counts;
      for (std::int64_t n = (group.channels - 1) / options.round_to * options.round_to; n >= 1;
           n -= options.round_to)
        counts.push_back(n);
      const std::vector<double> importance =
          channel_importance(current.graph, current.weights, group, options.norm);
      const auto pruned = [&](std::int64_t n, const graph::ParameterSet& w) {
        return prune_channels(current.graph, w, {{g, strongest_channels(importance, n)}});
      };
      // Counting MACs or parameters needs the structure only; timing needs weights.
      const graph::ParameterSet no_weights;
      const graph::ParameterSet& timed = resource.needs_weights() ? current.weights : no_weights;
      const SearchResult found = find_channels(
          counts,
          [&](std::int64_t n) {
            const PrunedModel p = pruned(n, timed);
            return scale * resource(p.graph, p.params);
          },
          it.constraint, options.search, options.bisection_threshold,
          resource.timed() ? Confirm::Twice : Confirm::Once);
      c.evaluations = found.evaluations;
      c.simplify_seconds = seconds_since(start_ns);
      if (!found.channels) {
        c.note = counts.empty() ? fmt::format("{} channels: none fewer to try", group.channels)
                                : "no channel count meets the constraint";
        if (found.unconfirmed > 0)
          c.note += fmt::format(" ({} met it once, not when measured again)", found.unconfirmed);
        it.candidates.push_back(c);
        models.emplace_back();
        continue;
      }
      c.channels_after = *found.channels;
      if (found.unconfirmed > 0)
        c.note = fmt::format("{} wider count(s) met the constraint once, not when measured again",
                             found.unconfirmed);
      PrunedModel p = pruned(c.channels_after, current.weights);
      // Its resource as the search found it (a timed latency: the mean of the two measurements
      // under the constraint); measuring it once more would give another figure, within the
      // noise, and perhaps above the constraint.
      AdaptedModel m{std::move(p.graph), std::move(p.params), found.resource, 0.0};
      c.resource = m.resource;
      start_ns = now_ns();
      if (it.by_score) {
        // No fine-tune, no evaluation: the score of the pruned network as it is.
        c.score = training_free_score(options.score, m.graph, m.weights, loss, score_images,
                                      score_labels);
        c.evaluate_seconds = seconds_since(start_ns);
        c.accuracy = m.accuracy = std::numeric_limits<double>::quiet_NaN();
        it.candidates.push_back(c);
        models.push_back(std::move(m));
        continue;
      }
      // Fine-tuned and evaluated below, once every candidate is simplified (the resource
      // measurements must not share the machine with the fine-tunes).
      jobs.push_back({it.candidates.size(), fine_tune_seed(options, k, g)});
      it.candidates.push_back(c);
      models.push_back(std::move(m));
    }
    run_jobs(jobs, loss, data, options, it.candidates, models, [&](std::size_t j) {
      say(fmt::format("iteration {}: fine-tuning {}", k + 1,
                      it.candidates[jobs[j].candidate].layers),
          static_cast<int>(j), static_cast<int>(jobs.size()));
    });
    stop_if_asked();
    // Keep the candidate that loses the least accuracy per resource removed, or the one that
    // scores highest.
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < it.candidates.size(); ++i) {
      Candidate& c = it.candidates[i];
      if (c.channels_after == 0 || !(c.resource < current.resource)) continue;
      if (it.by_score) {
        if (!std::isnan(c.score) && -c.score < best) {
          best = -c.score;
          it.chosen = static_cast<int>(i);
        }
        continue;
      }
      if (!std::isfinite(c.accuracy)) continue;
      c.ratio =
          (current.accuracy - c.accuracy + 1e-6) / ((current.resource - c.resource) / r0 + 1e-5);
      if (c.ratio < best) {
        best = c.ratio;
        it.chosen = static_cast<int>(i);
      }
    }
    if (it.chosen < 0) {
      result.iterations.push_back(std::move(it));
      result.stopped = "no candidate reduces the resource any further";
      break;
    }
    current = std::move(models[static_cast<std::size_t>(it.chosen)]);
    if (it.by_score && options.tune_chosen) {
      Candidate& chosen = it.candidates[static_cast<std::size_t>(it.chosen)];
      const std::int64_t start_ns = now_ns();
      graph::ParameterSet untuned = current.weights;
      try {
        tuner.fine_tune(current.graph, current.weights, options.short_term_iterations, 0,
                        fine_tune_seed(options, k, chosen.group));
      } catch (const train::NonFiniteLoss& e) {
        current.weights = std::move(untuned);  // kept as the score chose it
        chosen.note = fmt::format("its fine-tune diverged ({}); kept untuned", e.what());
      }
      chosen.fine_tune_seconds = seconds_since(start_ns);
    }
    it.resource = current.resource;
    it.accuracy = current.accuracy;
    result.iterations.push_back(std::move(it));
    if (observer.iteration_done) observer.iteration_done(result.iterations.back(), current);
  }
  result.budget_met = current.resource <= budget;
  if (result.budget_met)
    result.stopped = fmt::format("met the budget ({:.3g} of the original {})",
                                 current.resource / r0, resource_name(resource.kind()));

  if (!std::isfinite(current.accuracy))
    current.accuracy = tuner.accuracy(current.graph, current.weights, data.train, data.held_out);
  const std::int64_t long_start = now_ns();
  if (options.long_term_epochs > 0) {
    say("long-term fine-tune", 0, 1);
    tuner.fine_tune(current.graph, current.weights, 0, options.long_term_epochs, options.seed + 1);
    current.accuracy = tuner.accuracy(current.graph, current.weights, data.train, data.held_out);
  }
  result.long_term_seconds = seconds_since(long_start);
  say("evaluating on the test set", 0, 1);
  const std::vector<std::int64_t> test = all_of(data.test);
  result.test_accuracy_original = tuner.accuracy(model, result.original.weights, data.test, test);
  result.test_accuracy = tuner.accuracy(current.graph, current.weights, data.test, test);
  result.adapted = std::move(current);
  result.seconds = seconds_since(run_start);
  return result;
}

}  // namespace telar::adapt
