#include "report/dlrm_report.hpp"

#include <fmt/format.h>

#include <cmath>

#include "report/dlrm_sim_report.hpp"
#include "report/html_report.hpp"
#include "report/svg_chart.hpp"

namespace telar::report {

namespace {
double x_of(int epoch, std::int64_t batch, std::int64_t batches) {
  return static_cast<double>(epoch) +
         static_cast<double>(batch) / static_cast<double>(std::max<std::int64_t>(batches, 1));
}
}  // namespace

DlrmRecorder::DlrmRecorder(const RunDirectory& run, std::string title,
                           std::vector<std::pair<std::string, std::string>> summary,
                           std::string model_summary, bool resumed)
    : run_(run),
      title_(std::move(title)),
      summary_(std::move(summary)),
      model_summary_(std::move(model_summary)) {
  if (resumed && std::filesystem::exists(run.file("metrics.csv")))
    metrics_ = MetricsTable::read(run.file("metrics.csv"));
}

void DlrmRecorder::write_metrics() const {
  metrics_.write(run_.file("metrics.csv"));
}

void DlrmRecorder::on_interval(const dlrm::IntervalReport& r) {
  metrics_.add(r.epoch, r.batch, "train", "loss", r.loss);
  metrics_.add(r.epoch, r.batch, "train", "accuracy", r.accuracy);
  metrics_.add(r.epoch, r.batch, "train", "ms_per_batch", r.ms_per_batch);
  metrics_.add(r.epoch, r.batch, "train", "batches", static_cast<double>(r.batches));
}

void DlrmRecorder::on_test(const dlrm::TestReport& r) {
  metrics_.add(r.epoch, r.batch, "test", "loss", r.loss);
  metrics_.add(r.epoch, r.batch, "test", "accuracy", r.accuracy);
  if (std::isfinite(r.auc)) metrics_.add(r.epoch, r.batch, "test", "auc", r.auc);
  metrics_.add(r.epoch, r.batch, "test", "batches", static_cast<double>(r.batches));
}

void DlrmRecorder::finish(const dlrm::RunSummary* run, const dlrm::BenchmarkResult* bench) {
  if (run) {
    for (int c = 0; c < dlrm::kComponents; ++c)
      metrics_.add(-1, -1, "component",
                   std::string(dlrm::component_name(static_cast<dlrm::Component>(c))) + " seconds",
                   run->times.seconds[static_cast<std::size_t>(c)]);
    metrics_.add(-1, -1, "run", "samples_per_s", run->samples_per_s());
    if (run->simulation)
      for (dlrm::Component c : simulated_components()) {
        const dlrm::ComponentFigures& f = (*run->simulation)[c];
        const std::string name(dlrm::component_name(c));
        metrics_.add(-1, -1, "simulation", name + " cycles", static_cast<double>(f.cycles));
        metrics_.add(-1, -1, "simulation", name + " gb_reads", static_cast<double>(f.gb_reads));
        metrics_.add(-1, -1, "simulation", name + " gb_writes", static_cast<double>(f.gb_writes));
        metrics_.add(-1, -1, "simulation", name + " energy", f.energy);
      }
  }
  if (bench) {
    metrics_.add(-1, -1, "benchmark", "seconds_median", bench->seconds_median);
    metrics_.add(-1, -1, "benchmark", "samples_per_s", bench->samples_per_s);
    if (bench->effective_gb_per_s > 0)
      metrics_.add(-1, -1, "benchmark", "effective_gb_per_s", bench->effective_gb_per_s);
  }
  metrics_.write(run_.file("metrics.csv"));

  HtmlReport html(title_);
  html.key_values(summary_);
  html.heading("Model");
  html.preformatted(model_summary_);
  // Curves: x = fractional epoch.
  std::vector<std::int64_t> batches_at;
  Series train_loss{"train", {}, {}}, train_acc{"train", {}, {}}, test_loss{"test", {}, {}},
      test_acc{"test", {}, {}}, test_auc{"test AUC", {}, {}};
  std::int64_t batches = 1;
  for (const auto& r : metrics_.rows())
    if (r.metric == "batches") batches = static_cast<std::int64_t>(r.value);
  for (const auto& r : metrics_.rows()) {
    if (r.epoch < 0) continue;
    const double x = x_of(static_cast<int>(r.epoch), r.batch, batches);
    Series* s = nullptr;
    if (r.phase == "train" && r.metric == "loss") s = &train_loss;
    if (r.phase == "train" && r.metric == "accuracy") s = &train_acc;
    if (r.phase == "test" && r.metric == "loss") s = &test_loss;
    if (r.phase == "test" && r.metric == "accuracy") s = &test_acc;
    if (r.phase == "test" && r.metric == "auc") s = &test_auc;
    if (s) s->x.push_back(x), s->y.push_back(r.value);
  }
  if (!train_loss.x.empty()) {
    html.heading("Loss");
    html.svg(LineChart{"loss", "epoch", "loss", {train_loss, test_loss}}.render());
    html.heading("Accuracy and AUC");
    html.svg(LineChart{"accuracy (round(p) == target) and test AUC",
                       "epoch",
                       "fraction",
                       {train_acc, test_acc, test_auc}}
                 .render());
  }
  if (run) {
    html.heading("Time per component");
    std::vector<std::vector<std::string>> rows;
    double total = 0.0;
    for (double s : run->times.seconds) total += s;
    BarChart chart{"time per component", "seconds", {"run"}, {}, {}, true, true};
    for (int c = 0; c < dlrm::kComponents; ++c) {
      const double s = run->times.seconds[static_cast<std::size_t>(c)];
      const std::string name(dlrm::component_name(static_cast<dlrm::Component>(c)));
      rows.push_back({name, fmt::format("{:.4f}", s),
                      fmt::format("{:.1f} %", total > 0 ? 100.0 * s / total : 0.0)});
      chart.stack_names.push_back(name);
      chart.values.push_back({s});
    }
    html.table({"component", "seconds", "share"}, rows);
    html.svg(chart.render(480, 360));
    std::vector<std::pair<std::string, std::string>> result = {
        {"samples", std::to_string(run->samples)},
        {"train loss (last epoch)", fmt::format("{:.6f}", run->loss)},
        {"train accuracy (last epoch)", fmt::format("{:.4f}", run->accuracy)},
        {"samples/s (compute)", fmt::format("{:.1f}", run->samples_per_s())},
        {"wall seconds", fmt::format("{:.2f}", run->wall_seconds)}};
    if (run->test) {
      result.push_back({"test loss", fmt::format("{:.6f}", run->test->loss)});
      result.push_back({"test accuracy", fmt::format("{:.4f}", run->test->accuracy)});
      if (std::isfinite(run->test->auc))
        result.push_back({"test AUC", fmt::format("{:.4f}", run->test->auc)});
    }
    html.heading("Result");
    html.key_values(result);
    if (run->simulation)
      add_simulation_section(
          html, {DlrmSimulation{"run", "", "", "", *run->simulation, run->wall_seconds}});
  }
  if (bench) {
    html.heading("Benchmark: " + bench->benchmark);
    std::vector<std::pair<std::string, std::string>> b = {
        {"median seconds per call", fmt::format("{:.6f}", bench->seconds_median)},
        {"fastest / p10 / p90", fmt::format("{:.6f} / {:.6f} / {:.6f}", bench->seconds_min,
                                            bench->seconds_p10, bench->seconds_p90)},
        {"samples/s", fmt::format("{:.1f}", bench->samples_per_s)},
        {"lookups per call", fmt::format("{:.0f}", bench->lookups_per_call)}};
    if (bench->effective_gb_per_s > 0)
      b.push_back({"effective GB/s", fmt::format("{:.2f}", bench->effective_gb_per_s)});
    html.key_values(b);
  }
  html.paragraph(
      "Raw figures: metrics.csv (tidy: epoch, batch, phase, metric, value; -1 marks "
      "whole-run values). Configuration and result: run.json.");
  html.write(run_.file("report.html"));
}

}  // namespace telar::report
