// telar adapt: NetAdapt (docs/adapt.md): a trained network pruned, filter group by filter
// group, until its latency (or MACs, or parameters) on a target meets a budget, fine-tuned
// briefly after each step; the adapted model is written as a checkpoint that eval, bench and
// export take like any other.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include "adapt/netadapt.hpp"
#include "cli/adapt_report.hpp"
#include "cli/data_options.hpp"
#include "cli/model_options.hpp"
#include "cli/quantized_model.hpp"
#include "cli/trained_model.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/interrupt.hpp"
#include "core/parse.hpp"
#include "core/progress.hpp"
#include "core/threads.hpp"
#include "core/version.hpp"
#include "graph/loss.hpp"
#include "onnx/export.hpp"
#include "onnx/import.hpp"
#include "report/run_dir.hpp"
#include "report/run_record.hpp"
#include "train/checkpoint.hpp"
#include "train/data/split.hpp"

namespace telar::cli {

namespace {

// One adaptation: `args` as given (without --resume); `resume`: the run directory and state it
// continues.
int adapt_command(const Args& args,
                  const std::optional<std::pair<std::filesystem::path, AdaptState>>& resume) {
  CLI::App app{
      "Adapt a trained network to a resource budget on a target by NetAdapt: prune filters "
      "group by group, fine-tuning briefly after each step (docs/adapt.md).",
      "adapt"};
  ModelOptions model;
  model.add_to(app, "", /*required=*/false);
  std::string checkpoint, target = "cpu", precision = "fp32", resource_text = "latency";
  std::string search = "bisection", norm = "l2", score = "finetune", out;
  std::string lut, lut_interpolation = "bilinear";
  DataOptions data;
  data.validation = "0.1";
  data.add_to(app);
  app.get_option("--validation")
      ->description(
          "the part of the training set held out to evaluate candidates on: a fraction (0.1, "
          "the default) or a count (5000); fine-tuning draws from the rest");
  adapt::NetAdaptOptions o;
  double duration = 0.3;
  int threads = 0;
  bool json = false, overwrite = false;
  app.add_option("--checkpoint", checkpoint,
                 "the trained network: a run directory of telar train (or of telar adapt)");
  app.add_option("--target", target,
                 "where latency is measured: cpu, cpu:threads=N, cuda:N, sim:CFG (default cpu)");
  add_precision_option(app, &precision, /*timed_only=*/true);
  app.add_option("--resource", resource_text,
                 "what to reduce: latency (measured on --target), macs or params");
  app.add_option("--budget", o.budget,
                 "stop when the resource is this fraction of the original's (default 0.5)");
  app.add_option("--delta", o.delta,
                 "the first iteration's reduction, a fraction of the original (default 0.025)");
  app.add_option("--decay", o.decay, "each later iteration's reduction shrinks by this (0.96)");
  app.add_option("--max-iterations", o.max_iterations, "at most this many iterations (30)");
  app.add_option("--short-term-iterations", o.short_term_iterations,
                 "fine-tuning batches of each candidate (500)");
  app.add_option("--long-term-epochs", o.long_term_epochs,
                 "fine-tuning epochs of the adapted network (0)");
  app.add_option("--search", search,
                 "channel-count search: bisection (seed 003) or linear (NetAdapt's reference)");
  app.add_option("--score", score,
                 "how candidates are chosen: finetune (accuracy after the short-term fine-tune, "
                 "NetAdapt's), or a training-free score with no fine-tune: naswot, grad-norm, "
                 "synflow, params, naswot-layers (naswot per layer, docs/adapt.md)");
  app.add_option("--hybrid", o.hybrid,
                 "with --score: the last N% of the iterations choose by accuracy instead (seed "
                 "003's HN; --hybrid 30 is H30)");
  app.add_flag("--tune-chosen", o.tune_chosen,
               "with --score: fine-tune the candidate each score-chosen iteration keeps (only "
               "it) for the short-term iterations, so the network keeps training between cuts");
  app.add_option("--round-to", o.round_to, "channel counts tried are multiples of this (8)");
  app.add_option("--norm", norm, "filters kept: largest l2 (NetAdapt's) or l1 norm");
  app.add_option("--lr", o.lr, "fine-tuning learning rate (SGD, momentum 0.9; 0.001)");
  app.add_option("--batch-size", o.batch_size, "fine-tuning batch size (128)");
  app.add_option("--parallel", o.parallel,
                 "candidates fine-tuned and evaluated at once, each on its share of the threads "
                 "(1; the choice changes the result as the fine-tunes' thread count does)");
  app.add_option("--lut", lut,
                 "--resource latency from this look-up table (telar lut build) instead of "
                 "measuring each candidate");
  app.add_option("--lut-interpolation", lut_interpolation,
                 "between the table's grid points: bilinear (default), exact, rbf (NetAdapt's "
                 "cubic RBF, fitted again at every query off the grid) or rbf-prefit (fitted "
                 "once per layer)");
  bool reference = false;
  app.add_flag("--reference", reference,
               "NetAdapt's original algorithm in full, the baseline of seed 003's speed-ups: "
               "linear search, every candidate fine-tuned, the table's cubic RBF fitted at every "
               "miss (--search linear --score finetune --lut-interpolation rbf)");
  app.add_option("--measure-seconds", duration,
                 "--resource latency: timed runs per measurement, in seconds (0.3)")
      ->check(positive_real());
  app.add_option("--seed", o.seed, "seed of the fine-tuning order (and of --model's weights)")
      ->check(at_least(0));
  app.add_option("--out", out, "the run directory (default runs/adapt-<time>)");
  add_overwrite_flag(app, &overwrite);
  add_threads_option(app, &threads);
  app.add_flag("--json", json, "print the result as one JSON object on the last line");
  std::string resume_help;
  app.add_option("--resume", resume_help,
                 "continue the adaptation stopped in this run directory, with its own options "
                 "(only --max-iterations, --threads and --json may be given beside it)");
  int code = 0;
  if (!parse(app, args, "adapt", &code)) return code;
  apply_threads(threads);

  // Everything that can fail on bad input, before the run directory is made.
  if (!checkpoint.empty()) model.refuse_beside_checkpoint();
  require(model.model.empty() != checkpoint.empty(),
          "give the network to adapt: --checkpoint RUN (trained by telar train) or --model "
          "NAME|FILE.onnx (one of them)");
  if (reference) {
    for (const char* option :
         {"--search", "--score", "--hybrid", "--tune-chosen", "--lut-interpolation"})
      require(app.count(option) == 0,
              "--reference sets {} itself (the original algorithm); leave it out", option);
    search = "linear";
    score = "finetune";
    lut_interpolation = "rbf";
  }
  o.score = adapt::parse_score(score);
  adapt::check_options(o);
  o.search = adapt::parse_search(search);
  o.norm = adapt::parse_filter_norm(norm);
  const adapt::ResourceKind kind = adapt::parse_resource(resource_text);
  for (const char* option : {"--target", "--precision", "--measure-seconds"})
    require(kind == adapt::ResourceKind::Latency || app.count(option) == 0,
            "{} is for --resource latency; --resource {} counts, leave {} out", option,
            resource_text, option);
  require(!lut.empty() || app.count("--lut-interpolation") == 0,
          "--lut-interpolation is how a --lut table is read; give --lut or leave it out");
  adapt::ResourceMeter resource(kind, target, backend::parse_precision(precision, "--precision"),
                                {0.05, duration, 10});
  std::shared_ptr<const adapt::LatencyTable> table;
  if (!lut.empty()) {
    table = std::make_shared<const adapt::LatencyTable>(adapt::LatencyTable::read(lut));
    resource.use_table(table, adapt::parse_interpolation(lut_interpolation));
  }
  graph::Graph net;
  graph::ParameterSet weights;
  graph::LossKind loss = graph::LossKind::CrossEntropy;
  nlohmann::json config = nlohmann::json::object();
  std::optional<TrainedModel> trained;
  if (!checkpoint.empty()) {
    refuse_quantized(checkpoint, "telar adapt fine-tunes it");
    trained.emplace(load_trained_model(checkpoint, "--checkpoint"));
    config = trained->config;
  }
  // The run's seed gives the data it was trained on (synthetic sets are drawn from it).
  const std::uint64_t seed = config.value("seed", std::uint64_t{0});
  adapt::AdaptData d;
  d.train = data.load_train(seed, config);
  d.test = data.load_test(seed, config);
  if (trained) {
    net = std::move(trained->net);
    weights = std::move(trained->weights);
    loss = trained->loss;
  } else {
    // Built for the data's samples unless --input says otherwise, as telar train builds it.
    const Shape feed = d.train.sample_shape();
    const bool onnx_file = onnx::is_onnx_file(model.model);
    graph::zoo::ModelOptions zoo = model.zoo_options();
    if (!zoo.input && !onnx_file) zoo.input = feed;
    LoadedModel loaded = load_model(
        model.model, zoo,
        {o.seed, model.random_weights(), onnx_file ? std::optional(feed) : std::nullopt, {}});
    net = std::move(loaded.graph);
    weights = std::move(loaded.weights);
    config = {{"model", onnx_file ? std::filesystem::absolute(model.model).string() : model.model},
              {"input", fmt::format("{}", fmt::join(sample_input(net), "x"))},
              {"classes", net.value(net.outputs()[0]).shape.back()},
              {"loss", "cross_entropy"}};
  }
  adapt::check_prunable(net, o.round_to);
  if (table) table->require_model(net, lut);
  d.train = data.fitted_for(d.train, net, config);
  d.test = data.fitted_for(d.test, net, config);
  const auto split = train::split_train_validation(
      d.train.size(), train::ValidationSize::parse(data.validation, "--validation"), o.seed);
  require(!split.validation.empty(),
          "--validation {} holds out no samples; candidates are evaluated on them (e.g. 0.1)",
          data.validation);
  d.fine_tune = split.train;
  d.held_out = split.validation;
  const auto out_classes = net.value(net.outputs()[0]).shape.back();
  require(out_classes >= d.train.num_classes,
          "the network has {} outputs but the data has {} classes", out_classes,
          d.train.num_classes);
  resource.check_target(net, weights);
  report::RunDirectory run(
      resume ? resume->first
             : (out.empty() ? report::default_run_path("adapt") : std::filesystem::path(out)),
      resume ? report::RunReuse::Continue : report::reuse_for(overwrite));
  // A resumed run continues from its last iteration's model, kept as its checkpoint.
  std::optional<adapt::AdaptStart> start;
  if (resume) {
    const AdaptState& s = resume->second;
    start.emplace();
    start->original_resource = s.original_resource;
    start->original_accuracy = s.original_accuracy;
    start->done = s.done;
    if (s.done.empty()) {
      start->current = {net, weights, s.original_resource, s.original_accuracy};
    } else {
      TrainedModel last = load_trained_model(run.path().string(), "--resume");
      start->current = {std::move(last.net), std::move(last.weights), s.done.back().resource,
                        s.done.back().accuracy};
    }
    std::cout << fmt::format("resuming {} after iteration {}\n", run.path().string(),
                             s.done.size());
  }
  AdaptState state;
  state.args = args;

  std::cout << fmt::format(
      "adapting {} to {} {} of the original {} on {} ({} prunable groups, {} held-out "
      "samples)\n",
      net.name(), o.budget, adapt::resource_name(kind), adapt::resource_name(kind),
      kind != adapt::ResourceKind::Latency ? "any target"
      : precision == "fp32"                ? target
                                           : target + " at " + precision,
      adapt::ChannelGroups(net).prunable().size(), d.held_out.size());
  std::optional<ProgressBar> bar;
  std::string bar_stage;
  adapt::AdaptObserver observer;
  observer.progress = [&](const std::string& stage, int done, int total) {
    const std::string label = stage.substr(0, stage.find(':'));
    if (!bar || label != bar_stage) {
      if (bar) bar->finish();
      bar.emplace(label, total);
      bar_stage = label;
    }
    bar->update(done, stage.substr(stage.find(':') == std::string::npos ? stage.size()
                                                                        : stage.find(':') + 2));
  };
  // What the network was adapted for, as crosseval labels it: the target (and precision) whose
  // latency it fits, or the resource counted.
  const std::string adapted_for = kind != adapt::ResourceKind::Latency
                                      ? std::string(adapt::resource_name(kind))
                                  : precision == "fp32" ? target
                                                        : target + " " + precision;
  // Each iteration's model is kept as the run's checkpoint as it goes.
  const auto save = [&](const graph::Graph& g, const graph::ParameterSet& w,
                        const nlohmann::json& extra) {
    nlohmann::json c = data.recorded_in(config);  // the data it was fine-tuned on
    c["channels"] = adapt::channel_counts(g);
    c["adapted_for"] = adapted_for;
    c.update(extra);
    train::TrainerState state;
    state.config_json = c.dump();
    train::save_checkpoint(run.file(train::kCheckpointFileName), graph::with_loss(g, loss), w,
                           nullptr, state);
  };
  double r0 = 0.0;
  observer.started = [&](const adapt::AdaptedModel& original) {
    r0 = original.resource;
    state.original_resource = original.resource;
    state.original_accuracy = original.accuracy;
    if (start) state.done = start->done;
    // From here a stopped run can be resumed, even before its first iteration ends.
    write_file_atomic(run.file("adapt_state.json"), adapt_state_json(state).dump(1));
    std::cout << fmt::format("original: {} {:.4g} {}, held-out accuracy {:.4f}\n",
                             adapt::resource_name(kind), r0, resource.unit(), original.accuracy);
  };
  observer.iteration_done = [&](const adapt::Iteration& it, const adapt::AdaptedModel& m) {
    if (bar) bar->finish();
    bar.reset();
    const adapt::Candidate& c = it.candidates[static_cast<std::size_t>(it.chosen)];
    std::cout << fmt::format("iteration {}: {} {} -> {} channels, {} {:.4g} {} ({:.1f}%), {}\n",
                             it.index + 1, c.layers, c.channels_before, c.channels_after,
                             adapt::resource_name(kind), m.resource, resource.unit(),
                             100.0 * m.resource / r0,
                             it.by_score ? fmt::format("chosen by {} {:.4g}", score, c.score)
                                         : fmt::format("held-out accuracy {:.4f}", m.accuracy));
    save(m.graph, m.weights, {{"adapt_iteration", it.index + 1}});
    // After the checkpoint: a run killed between the two resumes one iteration early, and
    // repeats that iteration the same way.
    state.done.push_back(it);
    write_file_atomic(run.file("adapt_state.json"), adapt_state_json(state).dump(1));
  };
  // run.json says "running" from here; Ctrl-C or SIGTERM stops between candidates or at a
  // fine-tune's next batch, where the last iteration's checkpoint and adapt_state.json resume.
  report::RunRecord record(run, "adapt",
                           nlohmann::json{{"checkpoint", checkpoint},
                                          {"model", model.model},
                                          {"target", target},
                                          {"precision", precision},
                                          {"resource", adapt::resource_name(kind)},
                                          {"budget", o.budget},
                                          {"delta", o.delta},
                                          {"decay", o.decay},
                                          {"max_iterations", o.max_iterations},
                                          {"short_term_iterations", o.short_term_iterations},
                                          {"long_term_epochs", o.long_term_epochs},
                                          {"search", adapt::search_name(o.search)},
                                          {"round_to", o.round_to},
                                          {"norm", norm},
                                          {"lut", lut},
                                          {"lut_interpolation", lut_interpolation},
                                          {"reference", reference},
                                          {"score", score},
                                          {"hybrid", o.hybrid},
                                          {"tune_chosen", o.tune_chosen},
                                          {"lr", o.lr},
                                          {"batch_size", o.batch_size},
                                          {"validation", data.validation},
                                          {"seed", o.seed}});
  StopOnSignal stop_on_signal;
  // A signal's stop is recorded as "interrupted" inside the guard, so run.json is written once
  // (the guard writes "failed" only for a run not closed).
  const adapt::AdaptResult result = record.guard([&] {
    try {
      return adapt::net_adapt(net, weights, loss, d, resource, o, observer,
                              start ? &*start : nullptr);
    } catch (const Interrupted& e) {
      if (bar) bar->finish();
      record.interrupt({{"signal", signal_name(e.signal)}, {"iterations_done", state.done.size()}});
      throw Interrupted(fmt::format("{}; {} iterations are saved: continue with `telar adapt "
                                    "--resume {}`",
                                    e.what(), state.done.size(), run.path().string()),
                        e.signal);
    }
  });
  if (bar) bar->finish();
  save(result.adapted.graph, result.adapted.weights,
       {{"adapt_iteration", result.iterations.size()},
        {"adapted_from", checkpoint.empty() ? model.model : checkpoint}});
  // The adapted network as ONNX too, for any runtime (docs/export.md).
  onnx::ExportOptions onnx_options;
  onnx_options.producer_version = version();
  onnx::export_model(result.adapted.graph, result.adapted.weights, run.file("adapted.onnx"),
                     onnx_options);
  write_file_atomic(run.file("history.csv"), adapt_history_csv(result, adapt::score_name(o.score)));
  state.done = result.iterations;
  state.finished = result.stopped;
  write_file_atomic(run.file("adapt_state.json"), adapt_state_json(state).dump(1));
  write_adapt_report(run.file("report.html"), "telar adapt: " + net.name(), result, resource);
  const nlohmann::json summary = {{"model", net.name()},
                                  {"resource", adapt::resource_name(kind)},
                                  {"unit", resource.unit()},
                                  {"original_resource", result.original.resource},
                                  {"adapted_resource", result.adapted.resource},
                                  {"original_parameters", result.original.graph.parameter_count()},
                                  {"adapted_parameters", result.adapted.graph.parameter_count()},
                                  {"original_test_accuracy", result.test_accuracy_original},
                                  {"test_accuracy", result.test_accuracy},
                                  {"original_held_out_accuracy", result.original.accuracy},
                                  {"held_out_accuracy", result.adapted.accuracy},
                                  {"iterations", result.iterations.size()},
                                  {"budget_met", result.budget_met},
                                  {"stopped", result.stopped},
                                  {"seconds", result.seconds},
                                  {"channels", adapt::channel_counts(result.adapted.graph)},
                                  {"run_dir", run.path().string()}};
  record.finish(summary);
  std::cout << fmt::format(
      "{}: {} {:.4g} -> {:.4g} {} ({:.1f}%), parameters {} -> {}, test accuracy {:.4f} -> "
      "{:.4f}; {} iterations, {}; {:.1f} s\nrun directory: {} (report.html, history.csv, {}, "
      "adapted.onnx)\n",
      net.name(), adapt::resource_name(kind), result.original.resource, result.adapted.resource,
      resource.unit(), 100.0 * result.adapted.resource / result.original.resource,
      result.original.graph.parameter_count(), result.adapted.graph.parameter_count(),
      result.test_accuracy_original, result.test_accuracy, result.iterations.size(), result.stopped,
      result.seconds, run.path().string(), train::kCheckpointFileName);
  if (json) print_json(summary);
  return 0;
}

}  // namespace

int run_adapt(const Args& args) {
  const auto at = std::find(args.begin(), args.end(), "--resume");
  if (at == args.end()) return adapt_command(args, std::nullopt);
  // --resume RUN: the run's own arguments, with a new --max-iterations, --threads or --json.
  require(at + 1 != args.end(), "--resume needs the run directory of a stopped telar adapt");
  const std::filesystem::path dir = *(at + 1);
  Args extra;
  for (auto it = args.begin(); it != args.end(); ++it) {
    if (it == at) {
      ++it;
      continue;
    }
    const bool valued = *it == "--max-iterations" || *it == "--threads";
    require(valued || *it == "--json",
            "--resume continues a run with the options it was started with; give only --resume "
            "RUN (and --max-iterations, --threads, --json), not {}",
            *it);
    extra.push_back(*it);
    if (valued) {
      require(it + 1 != args.end(), "{} needs a value", *it);
      extra.push_back(*++it);
    }
  }
  AdaptState state = read_adapt_state(dir / "adapt_state.json");
  // Its arguments less the options given again (compared by name, not by value: a saved
  // "--short-term-iterations 2" stays beside a new "--max-iterations 2"), then these.
  std::vector<std::string> given;
  for (const std::string& token : extra)
    if (token.rfind("--", 0) == 0) given.push_back(token);
  Args merged;
  for (std::size_t i = 0; i < state.args.size(); ++i) {
    const std::string& a = state.args[i];
    const std::string name = a.substr(0, a.find('='));
    if (std::find(given.begin(), given.end(), name) != given.end()) {
      const bool value_follows = a == "--max-iterations" || a == "--threads";
      if (value_follows) ++i;
      continue;
    }
    merged.push_back(a);
  }
  merged.insert(merged.end(), extra.begin(), extra.end());
  const bool by_iterations = state.finished.rfind("reached --max-iterations", 0) == 0;
  const auto more = std::find(extra.begin(), extra.end(), "--max-iterations");
  const bool goes_on =
      by_iterations && more != extra.end() &&
      parse_int(*(more + 1), "--max-iterations") > static_cast<std::int64_t>(state.done.size());
  require(
      state.finished.empty() || goes_on,
      "the adaptation in {} has finished ({}); nothing to resume{}", dir.string(), state.finished,
      by_iterations
          ? fmt::format(" (give a --max-iterations larger than its {} to go on)", state.done.size())
          : std::string(" (adapt the run's checkpoint again, with another --budget, "
                        "into a new --out)"));
  return adapt_command(merged, std::make_pair(dir, std::move(state)));
}

}  // namespace telar::cli
