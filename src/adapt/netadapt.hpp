#pragma once
// NetAdapt (Yang et al. 2018; seed 003, chapter 5): a trained network made to fit a resource
// budget on a target by removing filters, one channel group at a time.
//
// Iteration k sets a constraint, the current resource less δ·R0·decay^k (R0: the original's).
// Each prunable channel group (adapt/channel_groups.hpp) yields one candidate: the group
// shrunk to the largest multiple of `round_to` channels below its count whose resource meets
// the constraint (adapt/channel_search.hpp), keeping its filters of largest L2 norm, then
// fine-tuned for a few batches (the short-term fine-tune) and evaluated on data held out of
// the training set (several candidates at once with `parallel`). The candidate kept is the one that
// loses the least accuracy per resource removed, as the reference code's rule: the minimum of
// (acc_prev − acc + 1e-6) / (res_prev − res + 1e-5), resources taken as fractions of R0. The loop
// ends when the budget is met (or after `max_iterations`); a long-term fine-tune of the result may
// follow.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "adapt/channel_search.hpp"
#include "adapt/prune.hpp"
#include "adapt/resource.hpp"
#include "adapt/scores.hpp"
#include "graph/graph.hpp"
#include "graph/loss.hpp"
#include "graph/parameters.hpp"
#include "train/data/dataset.hpp"

namespace telar::adapt {

struct NetAdaptOptions {
  double budget = 0.5;   // stop at this fraction of the original resource
  double delta = 0.025;  // the first iteration's reduction, a fraction of the original
  double decay = 0.96;   // each later iteration's reduction shrinks by this factor
  int max_iterations = 30;
  std::int64_t short_term_iterations = 500;  // fine-tuning batches per candidate
  int long_term_epochs = 0;                  // fine-tuning epochs of the result
  ChannelSearch search = ChannelSearch::Bisection;
  int bisection_threshold = 16;
  std::int64_t round_to = 8;  // channel counts tried: multiples of this
  FilterNorm norm = FilterNorm::L2;
  // How candidates are chosen: by accuracy after the short-term fine-tune (NetAdapt's), or by a
  // training-free score (the highest wins) with no fine-tune. With a score, `hybrid` percent of
  // the iterations, the last ones, still choose by accuracy (seed 003's HN; H30: hybrid 30).
  CandidateScore score = CandidateScore::FineTune;
  int hybrid = 0;
  // With a score: after each iteration it chose, the chosen candidate (and only it) is
  // fine-tuned for `short_term_iterations` batches, so that the network keeps training between
  // cuts (not seed 003's hybrid, where those iterations train nothing).
  bool tune_chosen = false;
  std::int64_t score_batch = 64;  // samples of the held-out data a score sees
  // Fine-tuning: SGD as the reference code (momentum 0.9, weight decay 1e-4).
  double lr = 1e-3;
  std::int64_t batch_size = 128;
  std::uint64_t seed = 0;
  std::string backend = "cpu";  // where candidates are fine-tuned and evaluated
  // Candidates fine-tuned and evaluated at once, each on its share of the compute threads
  // (cpu:threads=T/N; backend "cpu" only). Simplifying (measuring the resource) stays one
  // candidate at a time. The result depends on N only through the threads each fine-tune has:
  // N = 2 chooses as N = 1 with backend "cpu:threads=T/2" does.
  int parallel = 1;
};

// The data of an adaptation: the training set split into the samples fine-tuning draws from and
// those candidates are evaluated on, and a test set for the result.
struct AdaptData {
  train::Dataset train;
  std::vector<std::int64_t> fine_tune;  // indices into `train`
  std::vector<std::int64_t> held_out;   // indices into `train`
  train::Dataset test;
};

// One candidate of an iteration, as history.csv lists it.
struct Candidate {
  int group = 0;       // index into the model's channel groups
  std::string layers;  // the group's name (its first layer, "+N" for more)
  std::int64_t channels_before = 0, channels_after = 0;
  double resource = 0.0;  // after pruning
  double accuracy = 0.0;  // on the held-out data, after the short-term fine-tune (NaN: none)
  double ratio = 0.0;     // the accuracy rule's value
  double score = 0.0;     // the training-free score (iterations chosen by a score)
  int evaluations = 0;    // resource evaluations of the channel search
  double simplify_seconds = 0.0, fine_tune_seconds = 0.0, evaluate_seconds = 0.0;
  std::string note;  // why the group gave no candidate (then channels_after is 0)
};

struct Iteration {
  int index = 0;
  double constraint = 0.0;
  bool by_score = false;  // chosen by the training-free score, not by accuracy
  std::vector<Candidate> candidates;
  int chosen = -1;                        // index into candidates
  double resource = 0.0, accuracy = 0.0;  // of the model kept
};

// The model as it stands: its graph, weights and channel counts by group.
struct AdaptedModel {
  graph::Graph graph;
  graph::ParameterSet weights;
  double resource = 0.0;
  double accuracy = 0.0;  // held-out; NaN while chosen by scores alone
};

struct AdaptResult {
  AdaptedModel original, adapted;
  std::vector<Iteration> iterations;
  bool budget_met = false;
  std::string stopped;  // why the loop ended
  double test_accuracy_original = 0.0, test_accuracy = 0.0;
  double seconds = 0.0, long_term_seconds = 0.0;
};

// What the caller hears of the progress: a line when a stage begins, and each iteration when it
// ends (to write history and a checkpoint as it goes).
struct AdaptObserver {
  std::function<void(const std::string& stage, int done, int total)> progress;
  std::function<void(const AdaptedModel& original)> started;  // measured, before iterating
  std::function<void(const Iteration& iteration, const AdaptedModel& model)> iteration_done;
};

// The number of iterations the schedule needs to reach the budget (capped by max_iterations),
// and how many of the first ones a hybrid run chooses by its score.
int scheduled_iterations(const NetAdaptOptions& options);
int score_iterations(const NetAdaptOptions& options);

// Where a resumed adaptation starts: the original's figures as first measured, the iterations
// done and the model they left.
struct AdaptStart {
  double original_resource = 0.0, original_accuracy = 0.0;
  AdaptedModel current;
  std::vector<Iteration> done;
};

// Adapts `model` (a trained classifier and its weights, `loss` its training loss) to the budget.
// Throws telar::Error for options out of range or a model with nothing prunable, and
// telar::Interrupted when a signal asks to stop (the caller's StopOnSignal): between candidates,
// or at a fine-tune's next batch; what `observer.iteration_done` saved is where to resume.
AdaptResult net_adapt(const graph::Graph& model, const graph::ParameterSet& weights,
                      graph::LossKind loss, const AdaptData& data, const ResourceMeter& resource,
                      const NetAdaptOptions& options, const AdaptObserver& observer = {},
                      const AdaptStart* start = nullptr);

// The checks net_adapt makes of its options and its model, for a caller to refuse before it
// writes anything.
void check_options(const NetAdaptOptions& options);
// A model with a prunable group of more than `round_to` channels (fewer cannot be cut to a
// multiple of it).
void check_prunable(const graph::Graph& model, std::int64_t round_to = 1);

}  // namespace telar::adapt
