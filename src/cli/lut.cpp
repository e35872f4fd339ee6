// telar lut build | check: NetAdapt's per-layer latency look-up table for a model on a target
// (adapt/lut.hpp, docs/adapt.md), and how well it predicts whole models.
#include "adapt/lut.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "adapt/prune.hpp"
#include "adapt/resource.hpp"
#include "cli/model_options.hpp"
#include "cli/trained_model.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/progress.hpp"
#include "core/rng.hpp"
#include "core/statistics.hpp"
#include "core/threads.hpp"
#include "report/html_report.hpp"
#include "report/run_dir.hpp"
#include "report/svg_chart.hpp"

namespace telar::cli {

namespace {

// A check whose original model moved more than this between its start and end says so.
constexpr double kDriftWarning = 0.05;

// "whole = 0.825 x layers + 0.0257 ms x MB of weights past the 32 MB cache -0.0822 ms"
std::string fit_text(const adapt::LatencyTable& table) {
  const adapt::WholeModelFit& fit = table.fit();
  if (!fit.follows())
    return fmt::format(
        "whole = the layers' sum (the whole model did not follow its layers when measured: "
        "correlation {:.2f}; a busy machine?)",
        fit.correlation);
  return fmt::format("whole = {:.3f} x layers{} {:+.4f} ms", fit.scale,
                     fit.memory_ms_per_mb > 0.0
                         ? fmt::format(" + {:.4f} ms x MB of weights past the {:.0f} MB cache",
                                       fit.memory_ms_per_mb, table.cache_bytes() / (1 << 20))
                         : "",
                     fit.rest_ms);
}

// check.csv and report.html of `telar lut check --out`: each variant's predicted and measured
// latency, and the two against each other on a chart with the ±10 % band.
void write_check_report(const report::RunDirectory& dir, const std::string& model,
                        const std::string& lut, const adapt::LatencyTable& table,
                        const std::vector<double>& predicted, const std::vector<double>& measured,
                        double median, double within, double drift,
                        std::optional<double> since_fit) {
  std::string csv = "variant,predicted_ms,measured_ms,error\n";
  std::vector<std::vector<std::string>> rows;
  std::vector<double> errors;  // percent, for the second chart
  for (std::size_t v = 0; v < predicted.size(); ++v) {
    const double error = (predicted[v] - measured[v]) / measured[v];
    errors.push_back(100.0 * error);
    const std::string name = v == 0 ? "original" : std::to_string(v);
    csv += fmt::format("{},{:.6g},{:.6g},{:.6g}\n", name, predicted[v], measured[v], error);
    rows.push_back({name, fmt::format("{:.4f}", predicted[v]), fmt::format("{:.4f}", measured[v]),
                    fmt::format("{:+.1f}%", 100.0 * error)});
  }
  write_file_atomic(dir.file("check.csv"), csv);
  report::HtmlReport html("telar lut check: " + model);
  html.key_values(
      {{"table", lut},
       {"target", table.header().target + " (" + table.header().precision + ")"},
       {"fit", fit_text(table)},
       {"variants", std::to_string(predicted.size())},
       {"median |error|", fmt::format("{:.1f}%", 100.0 * median)},
       {"within ±10%", fmt::format("{:.0f}%", 100.0 * within)},
       {"the original, end against start",
        fmt::format("{:+.1f}% (the machine's own drift while the check ran)", 100.0 * drift)},
       {"the original, start against the fit",
        since_fit ? fmt::format("{:+.1f}%", 100.0 * *since_fit)
                  : std::string("not in this table (made before format 4)")}});
  const double top = std::max(*std::max_element(measured.begin(), measured.end()),
                              *std::max_element(predicted.begin(), predicted.end()));
  report::LineChart chart{"Predicted against measured latency", "measured ms", "predicted ms", {}};
  chart.series.push_back({"variants", measured, predicted, true});
  chart.series.push_back({"predicted = measured", {0.0, top}, {0.0, top}});
  chart.series.push_back({"+10%", {0.0, top}, {0.0, 1.1 * top}});
  chart.series.push_back({"-10%", {0.0, top}, {0.0, 0.9 * top}});
  html.svg(chart.render(720, 480));
  // The same as relative errors, which the small variants' corner of the first chart hides.
  const double right = *std::max_element(measured.begin(), measured.end());
  report::LineChart error_chart{
      "Error of the prediction against the variant's latency", "measured ms", "error %", {}};
  error_chart.series.push_back({"variants", measured, errors, true});
  error_chart.series.push_back({"predicted = measured", {0.0, right}, {0.0, 0.0}});
  error_chart.series.push_back({"+10%", {0.0, right}, {10.0, 10.0}});
  error_chart.series.push_back({"-10%", {0.0, right}, {-10.0, -10.0}});
  html.svg(error_chart.render());
  html.table({"variant", "predicted ms", "measured ms", "error"}, rows);
  html.write(dir.file("report.html"));
}

}  // namespace

int run_lut(const Args& args) {
  CLI::App app{
      "NetAdapt's latency look-up table: each Conv2d and Linear of a model measured "
      "alone on a target over a grid of channel counts (docs/adapt.md).",
      "lut"};
  ModelOptions model;
  std::string checkpoint, target = "cpu", precision = "fp32", out, lut, interpolation = "bilinear",
                          report_out;
  double seconds = 0.05, check_seconds = 0.3;
  int variants = 10, threads = 0;
  std::uint64_t seed = 0;
  bool json = false, overwrite = false, refit = false;
  auto* build = app.add_subcommand("build", "measure the table of a model on a target into --out");
  auto* check = app.add_subcommand(
      "check", "predicted against measured latency of pruned variants of the model");
  for (auto* a : {build, check}) {
    model.add_to(*a, "", /*required=*/false);
    a->add_option("--checkpoint", checkpoint, "the model of a run (telar train or adapt)");
    add_threads_option(*a, &threads);
  }
  build->add_option("--target", target,
                    "where to measure: cpu, cpu:threads=N, cuda:N or sim:CONFIG.cfg (a simulated "
                    "accelerator: its cycles)");
  add_precision_option(*build, &precision, /*timed_only=*/true);
  build->add_option("--out", out, "the table's file (a build that was stopped continues it)")
      ->required();
  build->add_flag("--refit", refit,
                  "keep the entries of the finished table in --out and make its fit again (the "
                  "whole model measured anew, seconds), e.g. after the machine's load changed");
  build->add_option("--measure-seconds", seconds, "timed runs per entry, in seconds (0.05)")
      ->check(positive_real());
  check->add_option("--lut", lut, "the table (telar lut build)")->required();
  check->add_option("--variants", variants, "pruned variants measured (10)")->check(at_least(1));
  check->add_option("--measure-seconds", check_seconds, "timed runs per variant, in seconds (0.3)")
      ->check(positive_real());
  check->add_option("--lut-interpolation", interpolation,
                    "between grid points: bilinear (default), exact, rbf or rbf-prefit");
  check->add_option("--seed", seed, "seed of the variants' channel counts")->check(at_least(0));
  check->add_flag("--json", json, "print the result as one JSON object on the last line");
  check->add_option("--out", report_out,
                    "a run directory for check.csv, run.json and report.html (predicted against "
                    "measured, charted)");
  add_overwrite_flag(*check, &overwrite);
  app.require_subcommand(1);
  int code = 0;
  if (!parse(app, args, "lut", &code)) return code;
  apply_threads(threads);
  if (!checkpoint.empty()) model.refuse_beside_checkpoint();
  require(model.model.empty() != checkpoint.empty(),
          "give the model: --model NAME|FILE.onnx or --checkpoint RUN (one of them)");
  const graph::Graph g =
      checkpoint.empty() ? model.build() : load_trained_model(checkpoint, "--checkpoint").net;

  if (*build) {
    const backend::Precision p = backend::parse_precision(precision, "--precision");
    require(!refit || std::filesystem::exists(out),
            "--refit makes the fit of a finished table again, and {} does not exist; build it "
            "without --refit",
            out);
    std::optional<ProgressBar> bar;
    const adapt::LatencyTable t = adapt::LatencyTable::build(
        g, target, p, out, {0.02, seconds, 10}, refit, [&](std::int64_t done, std::int64_t total) {
          if (!bar) bar.emplace(refit ? "refitting" : "measuring layers", total);
          bar->update(done);
        });
    if (bar) bar->finish();
    if (!t.fit().follows())
      std::cerr << fmt::format(
          "warning: the whole model's latency did not follow its layers' sum when measured "
          "(correlation {:.2f}; was the machine busy?): the table estimates by the layers' sum "
          "alone; make the fit again on a quieter machine: telar lut build --refit\n",
          t.fit().correlation);
    std::cout << fmt::format("{}: {} entries for {} layers on {} ({}); {}; wrote {}\n", g.name(),
                             t.entries(), adapt::lut_layers(g).size(), target, precision,
                             fit_text(t), out);
    return 0;
  }

  // check: variants with random channel counts, multiples of 8, in every prunable group.
  const auto table = std::make_shared<const adapt::LatencyTable>(adapt::LatencyTable::read(lut));
  table->require_model(g, lut);
  const adapt::LutInterpolation mode = adapt::parse_interpolation(interpolation);
  adapt::ResourceMeter measured(
      adapt::ResourceKind::Latency, table->header().target,
      backend::parse_precision(table->header().precision, "the table's precision"),
      {0.05, check_seconds, 10});
  const adapt::ChannelGroups groups(g);
  std::optional<report::RunDirectory> dir;
  if (!report_out.empty()) dir.emplace(report_out, report::reuse_for(overwrite));
  Rng rng(seed);
  std::vector<double> errors, predictions, measurements;
  nlohmann::json rows = nlohmann::json::array();
  std::cout << fmt::format("{:>8} {:>12} {:>12} {:>8}\n", "variant", "predicted ms", "measured ms",
                           "error");
  for (int v = 0; v < variants; ++v) {
    const graph::Graph variant =
        v == 0 ? g : adapt::with_channel_counts(g, adapt::random_channel_counts(g, groups, rng));
    const double predicted = table->estimate(variant, mode);
    const double ms = measured(variant, graph::ParameterSet::initialize(variant, 0));
    const double error = (predicted - ms) / ms;
    errors.push_back(std::fabs(error));
    predictions.push_back(predicted);
    measurements.push_back(ms);
    std::cout << fmt::format("{:>8} {:>12.4f} {:>12.4f} {:>7.1f}%\n",
                             v == 0 ? "original" : std::to_string(v), predicted, ms, 100.0 * error);
    rows.push_back({{"predicted_ms", predicted}, {"measured_ms", ms}, {"error", error}});
  }
  // The original once more: how far the machine's own speed moved while the variants ran, and
  // against the table's fit (a fit made while the machine ran at another speed is off by it).
  const double start = measurements.front();
  const double again = measured(g, graph::ParameterSet::initialize(g, 0));
  const double drift = (again - start) / start;
  std::cout << fmt::format("original again at the end: {:.4f} ms ({:+.1f}% from the start)\n",
                           again, 100.0 * drift);
  const std::optional<double> fitted = table->fitted_original_ms();
  const std::optional<double> since_fit =
      fitted ? std::optional<double>((start - *fitted) / *fitted) : std::nullopt;
  if (since_fit)
    std::cout << fmt::format("original when the table was fitted: {:.4f} ms ({:+.1f}% since)\n",
                             *fitted, 100.0 * *since_fit);
  const auto slower = [](double change) { return change > 0.0 ? "slower" : "faster"; };
  if (std::fabs(drift) > kDriftWarning)
    std::cerr << fmt::format(
        "warning: the original model ran {:.0f}% {} at the end of the check than at its start: "
        "the machine's speed changed while it ran (other work on it?), and the errors include "
        "that change; check again on a quieter machine\n",
        100.0 * std::fabs(drift), slower(drift));
  else if (since_fit && std::fabs(*since_fit) > kDriftWarning)
    std::cerr << fmt::format(
        "warning: the original model runs {:.0f}% {} now than when the table's fit was made: "
        "the predictions are off by about that much; make the fit again now (telar lut build "
        "--refit, seconds) if this machine's speed has changed for good\n",
        100.0 * std::fabs(*since_fit), slower(*since_fit));
  const double median = percentile(errors, 0.5);
  const double within = static_cast<double>(std::count_if(errors.begin(), errors.end(),
                                                          [](double e) { return e <= 0.1; })) /
                        static_cast<double>(errors.size());
  std::cout << fmt::format("median |error| {:.1f}%, {:.0f}% of the variants within ±10%\n",
                           100.0 * median, 100.0 * within);
  const nlohmann::json result = {{"median_abs_error", median},
                                 {"within_10_percent", within},
                                 {"original_again_ms", again},
                                 {"drift", drift},
                                 {"fitted_original_ms", fitted ? nlohmann::json(*fitted) : nullptr},
                                 {"since_fit", since_fit ? nlohmann::json(*since_fit) : nullptr},
                                 {"variants", rows}};
  if (dir) {
    write_check_report(*dir, g.name(), lut, *table, predictions, measurements, median, within,
                       drift, since_fit);
    dir->write_run_json("lut check",
                        {{"lut", lut},
                         {"variants", variants},
                         {"seed", seed},
                         {"measure_seconds", check_seconds},
                         {"lut_interpolation", interpolation}},
                        {{"result", result}});
    std::cout << "wrote " << dir->path().string() << "/{run.json, check.csv, report.html}\n";
  }
  if (json) print_json(result);
  return 0;
}

}  // namespace telar::cli
