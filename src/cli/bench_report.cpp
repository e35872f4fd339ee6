#include "cli/bench_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/csv.hpp"
#include "core/files.hpp"
#include "graph/op.hpp"
#include "report/html_report.hpp"
#include "report/svg_chart.hpp"

namespace telar::cli {

std::string bench_label(const BenchPoint& point) {
  return point.precision == "fp32" ? point.target : point.target + " " + point.precision;
}

std::string bench_summary_csv(const std::vector<BenchPoint>& points) {
  std::string csv =
      "target,precision,batch,iterations,min_ms,mean_ms,median_ms,p90_ms,p95_ms,p99_ms,max_ms,"
      "stddev_ms,"
      "cv,samples_per_s,simulated,planned_bytes,probe_runs\n";
  for (const BenchPoint& p : points) {
    const SampleSummary& s = p.latency;
    csv += fmt::format(
        "{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},"
        "{:.3f},{},{},{}\n",
        p.target, p.precision, p.batch, s.count, s.min, s.mean, s.median, s.p90, s.p95, s.p99,
        s.max, s.stddev, s.cv, p.samples_per_s, p.simulated ? 1 : 0,
        p.planned_bytes ? std::to_string(*p.planned_bytes) : std::string(), p.runs.probes());
  }
  return csv;
}

std::string bench_latency_csv(const std::vector<BenchPoint>& points) {
  std::string csv = "target,precision,batch,iteration,latency_ms,probe\n";
  for (const BenchPoint& p : points)
    for (std::size_t i = 0; i < p.runs.ms.size(); ++i)
      csv += fmt::format("{},{},{},{},{:.6f},{}\n", p.target, p.precision, p.batch, i, p.runs.ms[i],
                         p.runs.probe[i] ? 1 : 0);
  return csv;
}

double layers_ms(const BenchPoint& point) {
  double sum = 0.0;
  for (const backend::NodeTime& t : point.layers) sum += t.ms;
  return sum;
}

std::vector<std::pair<std::string, double>> time_by_op(const BenchPoint& point) {
  std::map<std::string, double> sums;
  for (const backend::NodeTime& t : point.layers) sums[std::string(graph::op_name(t.kind))] += t.ms;
  std::vector<std::pair<std::string, double>> out(sums.begin(), sums.end());
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::vector<backend::NodeTime> longest_nodes(const BenchPoint& point, std::size_t count) {
  std::vector<backend::NodeTime> longest = point.layers;
  std::stable_sort(longest.begin(), longest.end(),
                   [](const auto& a, const auto& b) { return a.ms > b.ms; });
  longest.resize(std::min(longest.size(), count));
  return longest;
}

std::string bench_layers_csv(const std::vector<BenchPoint>& points) {
  std::string csv = "target,precision,batch,node,op,detail,ms,share\n";
  for (const BenchPoint& p : points) {
    const double sum = layers_ms(p);
    for (const backend::NodeTime& t : p.layers)
      csv += fmt::format("{},{},{},{},{},{},{:.6f},{:.6f}\n", csv_field(p.target), p.precision,
                         p.batch, csv_field(t.node), graph::op_name(t.kind), csv_field(t.detail),
                         t.ms, sum > 0.0 ? t.ms / sum : 0.0);
  }
  return csv;
}

nlohmann::json bench_point_json(const BenchPoint& p) {
  const SampleSummary& s = p.latency;
  nlohmann::json j = {{"target", p.target},
                      {"precision", p.precision},
                      {"batch", p.batch},
                      {"iterations", s.count},
                      {"latency_ms_min", s.min},
                      {"latency_ms_mean", s.mean},
                      {"latency_ms_median", s.median},
                      {"latency_ms_p90", s.p90},
                      {"latency_ms_p95", s.p95},
                      {"latency_ms_p99", s.p99},
                      {"latency_ms_max", s.max},
                      {"latency_ms_stddev", s.stddev},
                      {"cv", s.cv},
                      {"samples_per_s", p.samples_per_s},
                      {"simulated", p.simulated},
                      {"probe_runs", p.runs.probes()}};
  if (p.accuracy) j["accuracy"] = *p.accuracy;
  if (p.planned_bytes) j["planned_bytes"] = *p.planned_bytes;
  if (p.simulated) {
    j["cycles"] = p.cycles;
    j["host_nodes"] = p.host_nodes;
  }
  if (!p.layers.empty()) {
    nlohmann::json layers = nlohmann::json::array();
    for (const backend::NodeTime& t : p.layers)
      layers.push_back({{"node", t.node}, {"op", graph::op_name(t.kind)}, {"ms", t.ms}});
    j["layers"] = std::move(layers);
    j["layer_runs"] = p.layer_runs;
  }
  return j;
}

namespace {

// With --layers: each point's time by op (stacked bars, one per point) and its longest nodes.
void write_layers(report::HtmlReport& html, const std::vector<BenchPoint>& points) {
  std::vector<const BenchPoint*> with;
  for (const BenchPoint& p : points)
    if (!p.layers.empty()) with.push_back(&p);
  if (with.empty()) return;
  html.heading("Where the time goes");
  html.paragraph(
      "Each node's time in an evaluation-mode forward, a clock read around it, the mean of the "
      "runs below (the plan run whole, one node at a time: the sum can differ a little from the "
      "median latency above). layers.csv has every node.");
  // The eight op kinds that take longest over all points, the rest as "other".
  std::vector<std::string> ops;
  {
    std::map<std::string, double> total;
    for (const BenchPoint* p : with)
      for (const auto& [op, ms] : time_by_op(*p)) total[op] += ms;
    std::vector<std::pair<std::string, double>> sorted(total.begin(), total.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (std::size_t k = 0; k < sorted.size() && k < 8; ++k) ops.push_back(sorted[k].first);
    if (sorted.size() > 8) ops.push_back("other");
  }
  // ms[point][op]
  std::vector<std::vector<double>> ms(with.size(), std::vector<double>(ops.size(), 0.0));
  for (std::size_t i = 0; i < with.size(); ++i)
    for (const auto& [op, v] : time_by_op(*with[i])) {
      const auto at = std::find(ops.begin(), ops.end(), op);
      ms[i][at == ops.end() ? ops.size() - 1 : static_cast<std::size_t>(at - ops.begin())] += v;
    }
  // One point: a bar per op; several: a bar per point, stacked by op.
  report::BarChart by_op{"Time per forward by op", "ms", {}, {}, {}, with.size() > 1, true};
  if (with.size() == 1) {
    by_op.categories = ops;
    by_op.stack_names = {fmt::format("{} batch {}", bench_label(*with[0]), with[0]->batch)};
    by_op.values = ms;
  } else {
    by_op.stack_names = ops;
    by_op.values.assign(ops.size(), {});
    for (std::size_t i = 0; i < with.size(); ++i) {
      by_op.categories.push_back(fmt::format("{} batch {}", bench_label(*with[i]), with[i]->batch));
      for (std::size_t k = 0; k < ops.size(); ++k) by_op.values[k].push_back(ms[i][k]);
    }
  }
  html.svg(by_op.render());
  for (const BenchPoint* p : with) {
    const double sum = layers_ms(*p);
    const std::vector<backend::NodeTime> longest = longest_nodes(*p, 15);
    std::vector<std::vector<std::string>> rows;
    for (const auto& t : longest)
      rows.push_back({t.node, std::string(graph::op_name(t.kind)) + " " + t.detail,
                      fmt::format("{:.3f}", t.ms), fmt::format("{:.1f}%", 100.0 * t.ms / sum)});
    html.paragraph(fmt::format(
        "{} batch {}: the {} longest of {} nodes ({:.3f} ms in all, {} runs)", bench_label(*p),
        p->batch, longest.size(), p->layers.size(), sum, p->layer_runs));
    html.table({"node", "op", "ms", "share"}, rows);
  }
}

}  // namespace

void write_bench_report(const std::filesystem::path& path, const std::string& title,
                        const std::vector<BenchPoint>& points, const nlohmann::json& environment) {
  report::HtmlReport html(title);
  html.heading("Latency and throughput");
  std::vector<std::vector<std::string>> rows;
  for (const BenchPoint& p : points) {
    const SampleSummary& s = p.latency;
    rows.push_back({bench_label(p), std::to_string(p.batch), std::to_string(s.count),
                    fmt::format("{:.3f}", s.median), fmt::format("{:.3f}", s.mean),
                    fmt::format("{:.3f}", s.p90), fmt::format("{:.3f}", s.p99),
                    fmt::format("{:.3f}", s.min), fmt::format("{:.3f}", s.max),
                    fmt::format("{:.1f}%", 100.0 * s.cv), fmt::format("{:.1f}", p.samples_per_s),
                    p.accuracy ? fmt::format("{:.4f}", *p.accuracy) : "-",
                    p.planned_bytes ? fmt::format("{:.1f}", *p.planned_bytes / 1048576.0) : "-"});
  }
  html.table({"target", "batch", "runs", "median ms", "mean ms", "p90 ms", "p99 ms", "min ms",
              "max ms", "CV", "samples/s", "accuracy", "plan MiB"},
             rows);
  std::map<std::string, std::pair<report::Series, report::Series>> by_target;
  std::map<std::string, report::Series> memory_by_target;
  for (const BenchPoint& p : points) {
    auto& [latency, throughput] = by_target[bench_label(p)];
    latency.name = throughput.name = bench_label(p);
    latency.x.push_back(static_cast<double>(p.batch));
    latency.y.push_back(p.latency.median);
    throughput.x.push_back(static_cast<double>(p.batch));
    throughput.y.push_back(p.samples_per_s);
    if (!p.planned_bytes) continue;
    report::Series& memory = memory_by_target[bench_label(p)];
    memory.name = bench_label(p);
    memory.x.push_back(static_cast<double>(p.batch));
    memory.y.push_back(*p.planned_bytes / 1048576.0);
  }
  bool several_batches = false;
  for (const auto& [target, series] : by_target) several_batches |= series.first.x.size() > 1;
  if (several_batches) {
    report::LineChart latency{
        "Median latency against the batch size", "batch", "ms", {}, true, true};
    report::LineChart throughput{
        "Throughput against the batch size", "batch", "samples/s", {}, false, true};
    for (const auto& [target, series] : by_target) {
      latency.series.push_back(series.first);
      throughput.series.push_back(series.second);
    }
    html.svg(latency.render());
    html.svg(throughput.render());
    report::LineChart memory{"Memory each batch size's plan held",
                             "batch",
                             "MiB (activations, layout copies, weights, scratch)",
                             {},
                             false,
                             true};
    for (const auto& [target, series] : memory_by_target)
      if (series.x.size() > 1) memory.series.push_back(series);
    if (!memory.series.empty()) html.svg(memory.render());
  }
  // Each target's runs at its smallest batch (the latency figure), where noise shows.
  report::LineChart runs{
      "Each timed run at the smallest batch, in order (a busy machine shows "
      "as spikes)",
      "run",
      "ms",
      {}};
  std::map<std::string, std::int64_t> smallest;
  for (const BenchPoint& p : points)
    if (!smallest.count(bench_label(p)) || p.batch < smallest[bench_label(p)])
      smallest[bench_label(p)] = p.batch;
  for (const BenchPoint& p : points) {
    if (p.simulated || p.batch != smallest[bench_label(p)]) continue;
    report::Series s{fmt::format("{} batch {}", bench_label(p), p.batch), {}, p.runs.chosen()};
    for (std::size_t i = 0; i < s.y.size(); ++i) s.x.push_back(static_cast<double>(i));
    runs.series.push_back(std::move(s));
  }
  if (!runs.series.empty()) html.svg(runs.render());
  write_layers(html, points);
  html.heading("Environment");
  std::vector<std::pair<std::string, std::string>> env;
  for (const auto& [key, value] : environment.items())
    env.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
  html.key_values(env);
  html.write(path);
}

}  // namespace telar::cli
