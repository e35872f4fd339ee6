#include "prof/table_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "prof/derived_metrics.hpp"
#include "prof/scaling.hpp"

namespace telar::prof {

namespace {

struct Row {
  std::string label;
  double wall_ms = 0;
  std::vector<std::int64_t> values;   // per available event
  std::vector<std::int64_t> enabled;  // ns, summed over CPUs (and scopes, for sums)
  std::vector<std::int64_t> running;

  double running_share(std::size_t i) const {
    return running_fraction(static_cast<std::uint64_t>(std::max<std::int64_t>(enabled[i], 0)),
                            static_cast<std::uint64_t>(std::max<std::int64_t>(running[i], 0)));
  }
  void add(const Row& other) {
    wall_ms += other.wall_ms;
    for (std::size_t i = 0; i < values.size(); ++i) {
      values[i] += other.values[i];
      enabled[i] += other.enabled[i];
      running[i] += other.running[i];
    }
  }
};

Row empty_row(std::string label, std::size_t events) {
  return {std::move(label), 0, std::vector<std::int64_t>(events, 0),
          std::vector<std::int64_t>(events, 0), std::vector<std::int64_t>(events, 0)};
}

Row row_of(const Profile& p, const ScopeRecord& r, const std::vector<std::size_t>& events,
           std::string label) {
  Row row = empty_row(std::move(label), events.size());
  row.wall_ms = static_cast<double>(r.wall_ns) * 1e-6;
  for (std::size_t i = 0; i < events.size(); ++i) {
    for (std::size_t c = 0; c < p.cpus.size(); ++c) {
      row.enabled[i] += p.count(r, c, events[i]).time_enabled;
      row.running[i] += p.count(r, c, events[i]).time_running;
    }
    row.values[i] = p.total(r, events[i]);
  }
  return row;
}

std::string metric_value(const Metric& m) {
  if (m.unit == "FLOP" || m.unit == "FLOP/s") return fmt::format("{:.4g}", m.value);
  return fmt::format("{:.4f}", m.value);
}

std::string metrics_block(const Profile& p, const ScopeRecord& r) {
  std::string out;
  for (const auto& m : derive_metrics(totals_of(p, r)))
    out += fmt::format("  {:<28} {:>16}  {}\n", m.name, metric_value(m), m.unit);
  return out;
}

}  // namespace

std::string group_digits(std::int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string format_table(const Profile& p, const TableOptions& options) {
  std::string out;
  const auto events = p.available_events();
  for (const auto& e : p.events)
    if (!e.available) out += fmt::format("  {:<40} not counted: {}\n", e.name, e.unavailable);
  if (p.records.empty()) return out + "  (no scope was recorded)\n";

  // A single scope: perf stat style, one line per event.
  if (p.records.size() == 1) {
    const auto& r = p.records.front();
    const Row row = row_of(p, r, events, r.path);
    std::string body;
    for (std::size_t i = 0; i < events.size(); ++i) {
      const double on_counter = row.running_share(i);
      const std::string share =
          on_counter < 1.0 ? fmt::format("  ({:.1f}% of the time on a counter)", 100 * on_counter)
                           : "";
      body += fmt::format("  {:<40} {:>18}{}\n", p.events[events[i]].name,
                          group_digits(row.values[i]), share);
    }
    body += fmt::format("  {:<40} {:>18.3f}\n", "wall time (ms)", row.wall_ms);
    return body + out + metrics_block(p, r);
  }

  std::vector<Row> rows;
  // Run, epochs, evals, regions and their gaps, in order.
  for (const auto& r : p.records) {
    const bool shown = r.kind == ScopeKind::Run || r.kind == ScopeKind::Epoch ||
                       r.kind == ScopeKind::Eval || r.kind == ScopeKind::Region ||
                       (r.kind == ScopeKind::Gap && r.parent >= 0 &&
                        p.records[static_cast<std::size_t>(r.parent)].kind != ScopeKind::Batch &&
                        p.records[static_cast<std::size_t>(r.parent)].kind != ScopeKind::Node);
    if (shown) rows.push_back(row_of(p, r, events, r.path));
  }
  // The mean training batch (eval batches have their own scopes above them).
  std::size_t batches = 0;
  Row mean = empty_row("batch (mean)", events.size());
  std::map<std::string, Row> nodes;
  std::vector<std::string> node_order;
  for (const auto& r : p.records) {
    if (r.kind == ScopeKind::Batch) {
      ++batches;
      mean.add(row_of(p, r, events, ""));
    } else if (r.kind == ScopeKind::Node) {
      const std::string suffix = r.node.size() > r.name.size() ? r.node.substr(r.name.size()) : "";
      auto [it, inserted] = nodes.try_emplace(
          r.node, empty_row(fmt::format("node[{}]{} (sum)", r.name, suffix), events.size()));
      if (inserted) node_order.push_back(r.node);
      it->second.add(row_of(p, r, events, ""));
    }
  }
  if (batches > 0) {
    mean.label = fmt::format("batch (mean of {})", batches);
    mean.wall_ms /= static_cast<double>(batches);
    for (auto& v : mean.values) v /= static_cast<std::int64_t>(batches);
    rows.push_back(mean);
  }
  for (const auto& n : node_order) rows.push_back(nodes.at(n));

  std::size_t label_width = 5;
  for (const auto& r : rows) label_width = std::max(label_width, r.label.size());
  label_width = std::min<std::size_t>(label_width, 48);
  std::vector<std::size_t> widths;
  for (std::size_t i = 0; i < events.size(); ++i) {
    std::size_t w = p.events[events[i]].name.size();
    for (const auto& r : rows) w = std::max(w, group_digits(r.values[i]).size() + 1);
    widths.push_back(w);
  }
  std::string header = fmt::format("{:<{}} {:>12}", "scope", label_width, "wall ms");
  for (std::size_t i = 0; i < events.size(); ++i)
    header += fmt::format(" {:>{}}", p.events[events[i]].name, widths[i]);
  std::string body = header + "\n";
  bool any_multiplexed = false;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (k == options.max_rows) {
      body += fmt::format("... {} more rows in counters.csv\n", rows.size() - k);
      break;
    }
    const Row& r = rows[k];
    std::string line = fmt::format("{:<{}} {:>12.3f}", r.label, label_width, r.wall_ms);
    for (std::size_t i = 0; i < events.size(); ++i) {
      const bool mux = r.running_share(i) < 1.0;
      any_multiplexed = any_multiplexed || mux;
      line += fmt::format(" {:>{}}", group_digits(r.values[i]) + (mux ? "*" : ""), widths[i]);
    }
    body += line + "\n";
  }
  if (any_multiplexed)
    body += "* multiplexed: scaled by time_enabled/time_running (both in counters.csv)\n";
  body += out;
  const ScopeRecord& top = p.records.front();
  const std::string metrics = metrics_block(p, top);
  if (!metrics.empty()) body += fmt::format("derived metrics of {}:\n{}", top.path, metrics);
  return body;
}

}  // namespace telar::prof
