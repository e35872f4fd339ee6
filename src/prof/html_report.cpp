#include "prof/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "core/files.hpp"
#include "prof/cpu_list.hpp"
#include "prof/derived_metrics.hpp"
#include "prof/table_writer.hpp"
#include "prof/writers.hpp"
#include "report/svg_chart.hpp"

namespace telar::prof {

namespace {

bool in_eval(const ScopeRecord& r) {
  return r.path.find("/eval") != std::string::npos;
}

void settings_section(report::HtmlReport& html, const Profile& p) {
  std::string counted, not_counted;
  for (const auto& e : p.events) {
    if (e.available)
      counted += (counted.empty() ? "" : ", ") + e.name;
    else
      not_counted +=
          fmt::format("{}{} ({})", not_counted.empty() ? "" : "; ", e.name, e.unavailable);
  }
  std::vector<std::pair<std::string, std::string>> rows = {
      {"mode", p.mode == CountingMode::PerCpu
                   ? fmt::format("per-CPU on CPUs {}", format_cpu_list(p.cpus))
                   : fmt::format("per-thread ({} threads attached at start, later ones inherited)",
                                 p.threads)},
      {"domain", std::string(domain_name(p.domain))},
      {"multiplexing", p.multiplex ? (p.was_multiplexed ? "allowed, and it happened: values are "
                                                          "scaled by time_enabled/time_running"
                                                        : "allowed, not needed")
                                   : "off (one group per thread/CPU)"},
      {"events counted", counted.empty() ? "none (wall time only)" : counted}};
  if (!not_counted.empty()) rows.emplace_back("not counted here", not_counted);
  html.key_values(rows);
}

void totals_section(report::HtmlReport& html, const Profile& p) {
  const auto events = p.available_events();
  std::vector<std::string> header = {"scope", "wall ms"};
  for (std::size_t e : events) header.push_back(p.events[e].name);
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : p.records) {
    const bool top = r.kind == ScopeKind::Run || r.kind == ScopeKind::Epoch ||
                     r.kind == ScopeKind::Eval || r.kind == ScopeKind::Region ||
                     (r.kind == ScopeKind::Gap && r.depth <= 2);
    if (!top || rows.size() >= 200) continue;
    std::vector<std::string> row = {r.path, fmt::format("{:.3f}", r.wall_ns * 1e-6)};
    for (std::size_t e : events) row.push_back(group_digits(p.total(r, e)));
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return;
  html.heading("Totals");
  html.table(header, rows);
  const auto metrics = derive_metrics(totals_of(p, p.records.front()));
  if (!metrics.empty()) {
    std::vector<std::vector<std::string>> mrows;
    for (const auto& m : metrics) mrows.push_back({m.name, fmt::format("{:.6g}", m.value), m.unit});
    html.heading("Derived metrics of " + p.records.front().path);
    html.table({"metric", "value", "unit"}, mrows);
  }
}

// One line chart per event and per derived metric: x = batch number, one series per epoch.
void timeline_section(report::HtmlReport& html, const Profile& p) {
  std::vector<const ScopeRecord*> batches;
  for (const auto& r : p.records)
    if (r.kind == ScopeKind::Batch && !in_eval(r)) batches.push_back(&r);
  if (batches.size() < 2) return;
  html.heading("Per-batch timeline");
  auto series_by_epoch = [&](auto value_of) {
    std::map<std::int64_t, report::Series> by_epoch;
    for (const ScopeRecord* b : batches) {
      const auto v = value_of(*b);
      if (!v) continue;
      auto& s = by_epoch[b->epoch];
      s.name = b->epoch >= 0 ? fmt::format("epoch {}", b->epoch) : "batches";
      s.x.push_back(static_cast<double>(b->batch));
      s.y.push_back(*v);
    }
    std::vector<report::Series> out;
    for (auto& [epoch, s] : by_epoch) out.push_back(std::move(s));
    return out;
  };
  auto chart = [&](const std::string& title, const std::string& unit, auto value_of) {
    auto series = series_by_epoch(value_of);
    if (series.empty()) return;
    html.svg(report::LineChart{title, "batch", unit, std::move(series), false}.render());
  };
  chart("wall time per batch", "ms",
        [](const ScopeRecord& r) -> std::optional<double> { return r.wall_ns * 1e-6; });
  for (std::size_t e : p.available_events())
    chart(p.events[e].name + " per batch", p.events[e].name,
          [&](const ScopeRecord& r) -> std::optional<double> {
            return static_cast<double>(p.total(r, e));
          });
  std::set<std::string> metric_names;
  for (const ScopeRecord* b : batches)
    for (const auto& m : derive_metrics(totals_of(p, *b))) metric_names.insert(m.name);
  for (const auto& name : metric_names)
    chart(name + " per batch", name, [&](const ScopeRecord& r) -> std::optional<double> {
      for (const auto& m : derive_metrics(totals_of(p, r)))
        if (m.name == name) return m.value;
      return std::nullopt;
    });
}

// One bar chart per event: each node's forward and backward (stacked), summed over batches.
void layer_section(report::HtmlReport& html, const Profile& p) {
  std::vector<std::string> nodes;
  for (const auto& r : p.records)
    if (r.kind == ScopeKind::Node && !in_eval(r) &&
        std::find(nodes.begin(), nodes.end(), r.name) == nodes.end())
      nodes.push_back(r.name);
  if (nodes.empty()) return;
  html.heading("Per layer (training batches, summed)");
  auto bars = [&](const std::string& title, const std::string& unit, auto value_of) {
    std::vector<std::vector<double>> values(2, std::vector<double>(nodes.size(), 0.0));
    for (const auto& r : p.records) {
      if (r.kind != ScopeKind::Node || in_eval(r)) continue;
      const auto i =
          static_cast<std::size_t>(std::find(nodes.begin(), nodes.end(), r.name) - nodes.begin());
      const bool backward = r.node.size() > 4 && r.node.substr(r.node.size() - 4) == ".bwd";
      values[backward ? 1 : 0][i] += value_of(r);
    }
    html.svg(report::BarChart{title, unit, nodes, {"forward", "backward"}, values, true, false}
                 .render());
  };
  bars("wall time per layer", "ms", [](const ScopeRecord& r) { return r.wall_ns * 1e-6; });
  for (std::size_t e : p.available_events())
    bars(p.events[e].name + " per layer", p.events[e].name,
         [&](const ScopeRecord& r) { return static_cast<double>(p.total(r, e)); });
}

}  // namespace

void add_profile_sections(report::HtmlReport& html, const Profile& profile) {
  settings_section(html, profile);
  if (profile.records.empty()) {
    html.paragraph("No scope was recorded.");
    return;
  }
  totals_section(html, profile);
  timeline_section(html, profile);
  layer_section(html, profile);
}

void write_profile_files(const Profile& profile, const std::filesystem::path& dir,
                         const std::string& title,
                         const std::vector<std::pair<std::string, std::string>>& extra) {
  ensure_writable_dir(dir);
  write_file_atomic(dir / "counters.csv", counters_csv(profile));
  write_file_atomic(dir / "metrics.csv", metrics_csv(profile));
  report::HtmlReport html(title);
  if (!extra.empty()) html.key_values(extra);
  add_profile_sections(html, profile);
  html.write(dir / "report.html");
}

}  // namespace telar::prof
