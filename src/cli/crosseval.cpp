// telar crosseval: seed 003's cross-evaluation (Tables 4.5-4.7): networks adapted by telar adapt
// for different targets, each run on every target; per target, each network's latency
// reduction against the original's there, and each network's size reduction (docs/adapt.md).
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <optional>

#include "backend/calibration.hpp"
#include "cli/bench_target.hpp"
#include "cli/model_options.hpp"
#include "cli/trained_model.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/system_load.hpp"
#include "core/threads.hpp"
#include "report/html_report.hpp"
#include "report/run_dir.hpp"
#include "report/svg_chart.hpp"

namespace telar::cli {

namespace {

// A target as crosseval takes it: a backend, and optionally ":precision=P" (or ",precision=P"
// after other options) for another precision than fp32, e.g. cpu:precision=bf16.
struct TargetText {
  std::string backend;
  backend::Precision precision = backend::Precision::FP32;
  std::string label;
};

// A target as the table labels it: a sim target by its file's name without the folders and
// extension ("sim:maeri_256mses_128_bw").
std::string short_label(const std::string& text) {
  const auto sim = text.find("sim:");
  if (sim == std::string::npos) return text;
  const auto end = text.find_first_of(" ,", sim);
  const std::string path = text.substr(sim + 4, end == std::string::npos ? end : end - sim - 4);
  return text.substr(0, sim) + "sim:" + std::filesystem::path(path).stem().string() +
         (end == std::string::npos ? "" : text.substr(end));
}

TargetText parse_target(const std::string& text) {
  TargetText t{text, backend::Precision::FP32, short_label(text)};
  const auto at = text.find("precision=");
  if (at == std::string::npos) return t;
  require(at > 0 && (text[at - 1] == ':' || text[at - 1] == ','),
          "--targets '{}': write a precision as cpu:precision=bf16", text);
  const auto end = text.find(',', at);
  t.precision = backend::parse_precision(
      text.substr(at + 10, end == std::string::npos ? std::string::npos : end - at - 10),
      "--targets precision");
  std::string rest = text.substr(0, at - 1);
  if (end != std::string::npos) rest += (text[at - 1] == ':' ? ":" : ",") + text.substr(end + 1);
  t.backend = rest;
  return t;
}

struct Network {
  std::string label;  // "original" or "adapted for <target>"
  graph::Graph graph;
  graph::ParameterSet weights;
  std::int64_t bytes = 0;  // parameters and buffers, fp32
};

std::int64_t weight_bytes(const graph::ParameterSet& w) {
  return w.total_bytes();
}

}  // namespace

int run_crosseval(const Args& args) {
  CLI::App app{
      "Run networks adapted for different targets (telar adapt) on every target: the "
      "latency reduction of each against the original on each target, and their size "
      "(seed 003's cross-evaluation).",
      "crosseval"};
  std::vector<std::string> runs, targets;
  backend::MeasureOptions measure{0.2, 1.0, 10};
  double clock_ghz = 1.0;
  std::string out;
  int threads = 0;
  bool json = false, overwrite = false;
  app.add_option("--runs", runs,
                 "the adapted networks: run directories of telar adapt, comma-separated")
      ->required()
      ->delimiter(',');
  app.add_option("--targets", targets,
                 "where each runs, comma-separated: cpu, cpu:threads=N, cpu:precision=bf16, "
                 "cpu:precision=int8 (ranges from the random input: speed only), "
                 "cuda:N, sim:CFG (default cpu)")
      ->delimiter(',');
  app.add_option("--duration", measure.duration_seconds,
                 "timed runs per network and target, in seconds (1)")
      ->check(positive_real());
  app.add_option("--clock-ghz", clock_ghz, "sim targets: cycles become time at this clock")
      ->check(positive_real());
  app.add_option("--out", out, "write run.json, crosseval.csv and report.html here");
  add_overwrite_flag(app, &overwrite);
  add_threads_option(app, &threads);
  app.add_flag("--json", json, "print the result as one JSON object on the last line");
  int code = 0;
  if (!parse(app, args, "crosseval", &code)) return code;
  apply_threads(threads);
  if (targets.empty()) targets = {"cpu"};

  // Every network and target checked before anything is measured or written.
  std::vector<Network> networks;
  nlohmann::json first_config;
  for (const std::string& run : runs) {
    TrainedModel m = load_trained_model(run, "--runs");
    require(m.config.contains("channels"),
            "--runs {}: not a network adapted by telar adapt (its checkpoint records no channel "
            "counts); give the run directories of telar adapt",
            run);
    if (networks.empty()) {
      first_config = m.config;
      graph::Graph original = original_model(m.config);
      graph::ParameterSet w = graph::ParameterSet::initialize(original, 0);
      networks.push_back({"original", std::move(original), std::move(w), 0});
    }
    for (const char* key : {"model", "input", "classes"})
      require(m.config.value(key, nlohmann::json()) == first_config.value(key, nlohmann::json()),
              "--runs {}: adapted from another model ({} {} against {}); cross-evaluate networks "
              "adapted from one model",
              run, key, m.config.value(key, nlohmann::json()).dump(),
              first_config.value(key, nlohmann::json()).dump());
    const std::string label =
        fmt::format("adapted for {}", short_label(m.config.value("adapted_for", std::string("?"))));
    networks.push_back({label, std::move(m.net), std::move(m.weights), 0});
  }
  for (Network& n : networks) n.bytes = weight_bytes(n.weights);
  std::vector<TargetText> target_texts;
  for (const std::string& t : targets) target_texts.push_back(parse_target(t));
  // Every target compiled once now, so an unusable one fails before any measurement.
  const Tensor x =
      random_input(networks.front().graph.value(networks.front().graph.inputs()[0]).shape, 1, 0);
  // int8 targets: each network's ranges from the random input (speed only; docs/adapt.md).
  const auto compiled_for = [&](const TargetText& t, Network& n) {
    return compile_target(t.backend, t.precision, n.graph, n.weights, true,
                          backend::latency_calibration(n.graph, n.weights, t.precision, x));
  };
  for (const TargetText& t : target_texts) compiled_for(t, networks.front());
  std::optional<report::RunDirectory> dir;
  if (!out.empty()) dir.emplace(out, report::reuse_for(overwrite));

  // latency[t][n]: the median batch-1 latency of network n on target t.
  std::vector<std::vector<double>> latency(target_texts.size());
  std::cout << fmt::format("{} networks on {} targets, batch 1, {} threads, load {:.2f}\n",
                           networks.size(), target_texts.size(), compute_threads(),
                           load_average().value_or(-1.0));
  // One executable alive at a time, as telar bench measures: several compiled side by side
  // disturbed each other's timings of small models here (identical networks 40% apart).
  for (std::size_t t = 0; t < target_texts.size(); ++t)
    for (Network& n : networks) {
      BenchTarget compiled = compiled_for(target_texts[t], n);
      latency[t].push_back(measure_target(compiled, x, 1, measure, clock_ghz).latency.median);
    }

  // The table: rows the executing target, columns the networks; a cell is the reduction of the
  // network's latency there against the original's (the first column: the original's latency).
  std::size_t width = 10;
  for (const TargetText& t : target_texts) width = std::max(width, t.label.size());
  std::string header = fmt::format("{:<{}} {:>14}", "target", width, "original ms");
  std::vector<std::size_t> column(networks.size(), 14);
  for (std::size_t n = 1; n < networks.size(); ++n) {
    column[n] = std::max<std::size_t>(14, networks[n].label.size());
    header += fmt::format(" {:>{}}", networks[n].label, column[n]);
  }
  std::cout << header << "\n";
  std::string csv = "target,network,latency_ms,original_ms,latency_reduction_pct\n";
  nlohmann::json cells = nlohmann::json::array();
  for (std::size_t t = 0; t < target_texts.size(); ++t) {
    const double base = latency[t][0];
    std::string row = fmt::format("{:<{}} {:>14.4f}", target_texts[t].label, width, base);
    for (std::size_t n = 1; n < networks.size(); ++n) {
      const double reduction = 100.0 * (1.0 - latency[t][n] / base);
      row += fmt::format(" {:>{}.1f}%", reduction, column[n] - 1);
      csv += fmt::format("{},{},{:.6g},{:.6g},{:.3f}\n", target_texts[t].label, networks[n].label,
                         latency[t][n], base, reduction);
      cells.push_back({{"target", target_texts[t].label},
                       {"network", networks[n].label},
                       {"latency_ms", latency[t][n]},
                       {"original_ms", base},
                       {"latency_reduction_pct", reduction}});
    }
    std::cout << row << "\n";
  }
  nlohmann::json sizes = nlohmann::json::array();
  std::cout << fmt::format("{:<{}} {:>14}", "size MiB", width,
                           fmt::format("{:.2f}", networks[0].bytes / 1048576.0));
  for (std::size_t n = 1; n < networks.size(); ++n) {
    const double reduction = 100.0 * (1.0 - static_cast<double>(networks[n].bytes) /
                                                static_cast<double>(networks[0].bytes));
    std::cout << fmt::format(
        " {:>{}}", fmt::format("{:.2f} ({:.1f}%)", networks[n].bytes / 1048576.0, reduction),
        column[n]);
    sizes.push_back({{"network", networks[n].label},
                     {"parameters", networks[n].graph.parameter_count()},
                     {"mib", networks[n].bytes / 1048576.0},
                     {"size_reduction_pct", reduction}});
  }
  std::cout << "\n";

  const nlohmann::json result = {{"model", first_config.value("model", std::string())},
                                 {"original_parameters", networks[0].graph.parameter_count()},
                                 {"original_mib", networks[0].bytes / 1048576.0},
                                 {"cells", cells},
                                 {"sizes", sizes}};
  if (dir) {
    write_file_atomic(dir->file("crosseval.csv"), csv);
    report::HtmlReport html("telar crosseval: " + first_config.value("model", std::string()));
    html.heading("Latency reduction against the original, per target (batch 1)");
    std::vector<std::string> head = {"target", "original ms"};
    for (std::size_t n = 1; n < networks.size(); ++n) head.push_back(networks[n].label);
    std::vector<std::vector<std::string>> rows;
    report::BarChart chart{
        "Latency reduction against the original (%)", "%", {}, {}, {}, false, true};
    for (std::size_t n = 1; n < networks.size(); ++n) {
      chart.stack_names.push_back(networks[n].label);
      chart.values.emplace_back();
    }
    for (std::size_t t = 0; t < target_texts.size(); ++t) {
      std::vector<std::string> row = {target_texts[t].label, fmt::format("{:.4f}", latency[t][0])};
      chart.categories.push_back(target_texts[t].label);
      for (std::size_t n = 1; n < networks.size(); ++n) {
        const double reduction = 100.0 * (1.0 - latency[t][n] / latency[t][0]);
        row.push_back(fmt::format("{:.1f}%", reduction));
        chart.values[n - 1].push_back(reduction);
      }
      rows.push_back(std::move(row));
    }
    html.table(head, rows);
    html.svg(chart.render());
    html.heading("Size");
    std::vector<std::vector<std::string>> size_rows;
    for (const Network& n : networks)
      size_rows.push_back(
          {n.label, std::to_string(n.graph.parameter_count()),
           fmt::format("{:.2f}", n.bytes / 1048576.0),
           fmt::format("{:.1f}%", 100.0 * (1.0 - static_cast<double>(n.bytes) /
                                                     static_cast<double>(networks[0].bytes)))});
    html.table({"network", "parameters", "MiB", "size reduction"}, size_rows);
    html.write(dir->file("report.html"));
    dir->write_run_json("crosseval",
                        {{"runs", runs},
                         {"targets", targets},
                         {"duration_s", measure.duration_seconds},
                         {"clock_ghz", clock_ghz}},
                        {{"result", result}});
    std::cout << "wrote " << dir->path().string() << "/{run.json, crosseval.csv, report.html}\n";
  }
  if (json) print_json(result);
  return 0;
}

}  // namespace telar::cli
