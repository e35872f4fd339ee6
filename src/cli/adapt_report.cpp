#include "cli/adapt_report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "adapt/channel_groups.hpp"
#include "core/error.hpp"
#include "report/html_report.hpp"
#include "report/svg_chart.hpp"

namespace telar::cli {

namespace {

// A CSV field: quoted when it holds a comma or a quote.
std::string field(const std::string& text) {
  if (text.find_first_of(",\"") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::string adapt_history_csv(const adapt::AdaptResult& result, std::string_view score) {
  std::string csv =
      "iteration,chosen_by,constraint,group,layers,channels_before,channels_after,resource,"
      "accuracy,ratio,score,search_evaluations,simplify_s,fine_tune_s,evaluate_s,chosen,note\n";
  for (const adapt::Iteration& it : result.iterations)
    for (std::size_t i = 0; i < it.candidates.size(); ++i) {
      const adapt::Candidate& c = it.candidates[i];
      csv += fmt::format(
          "{},{},{:.6g},{},{},{},{},{:.6g},{:.6f},{:.6g},{:.6g},{},{:.3f},{:.3f},{:.3f},{},{}\n",
          it.index + 1, it.by_score ? std::string(score) : "accuracy", it.constraint, c.group,
          field(c.layers), c.channels_before, c.channels_after, c.resource, c.accuracy, c.ratio,
          c.score, c.evaluations, c.simplify_seconds, c.fine_tune_seconds, c.evaluate_seconds,
          static_cast<int>(i) == it.chosen ? 1 : 0, field(c.note));
    }
  return csv;
}

namespace {

// JSON has no NaN (nlohmann writes null): a figure not measured reads back as NaN.
double number(const nlohmann::json& j, const char* key) {
  const auto& v = j.at(key);
  return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>();
}

}  // namespace

nlohmann::json adapt_state_json(const AdaptState& state) {
  nlohmann::json iterations = nlohmann::json::array();
  for (const adapt::Iteration& it : state.done) {
    nlohmann::json candidates = nlohmann::json::array();
    for (const adapt::Candidate& c : it.candidates)
      candidates.push_back({{"group", c.group},
                            {"layers", c.layers},
                            {"channels_before", c.channels_before},
                            {"channels_after", c.channels_after},
                            {"resource", c.resource},
                            {"accuracy", c.accuracy},
                            {"ratio", c.ratio},
                            {"score", c.score},
                            {"evaluations", c.evaluations},
                            {"simplify_s", c.simplify_seconds},
                            {"fine_tune_s", c.fine_tune_seconds},
                            {"evaluate_s", c.evaluate_seconds},
                            {"note", c.note}});
    iterations.push_back({{"index", it.index},
                          {"constraint", it.constraint},
                          {"by_score", it.by_score},
                          {"chosen", it.chosen},
                          {"resource", it.resource},
                          {"accuracy", it.accuracy},
                          {"candidates", candidates}});
  }
  return {{"args", state.args},
          {"original_resource", state.original_resource},
          {"original_accuracy", state.original_accuracy},
          {"iterations", iterations},
          {"finished", state.finished}};
}

AdaptState read_adapt_state(const std::filesystem::path& file) {
  std::ifstream in(file);
  require(static_cast<bool>(in),
          "{}: no such file; --resume takes the run directory of a telar "
          "adapt that was stopped",
          file.string());
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    AdaptState s;
    s.args = j.at("args").get<std::vector<std::string>>();
    s.original_resource = number(j, "original_resource");
    s.original_accuracy = number(j, "original_accuracy");
    s.finished = j.at("finished").get<std::string>();
    for (const auto& ij : j.at("iterations")) {
      adapt::Iteration it;
      it.index = ij.at("index").get<int>();
      it.constraint = number(ij, "constraint");
      it.by_score = ij.at("by_score").get<bool>();
      it.chosen = ij.at("chosen").get<int>();
      it.resource = number(ij, "resource");
      it.accuracy = number(ij, "accuracy");
      for (const auto& cj : ij.at("candidates")) {
        adapt::Candidate c;
        c.group = cj.at("group").get<int>();
        c.layers = cj.at("layers").get<std::string>();
        c.channels_before = cj.at("channels_before").get<std::int64_t>();
        c.channels_after = cj.at("channels_after").get<std::int64_t>();
        c.resource = number(cj, "resource");
        c.accuracy = number(cj, "accuracy");
        c.ratio = number(cj, "ratio");
        c.score = number(cj, "score");
        c.evaluations = cj.at("evaluations").get<int>();
        c.simplify_seconds = number(cj, "simplify_s");
        c.fine_tune_seconds = number(cj, "fine_tune_s");
        c.evaluate_seconds = number(cj, "evaluate_s");
        c.note = cj.at("note").get<std::string>();
        it.candidates.push_back(std::move(c));
      }
      s.done.push_back(std::move(it));
    }
    return s;
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not a state file of telar adapt ({}); it was damaged, start the adaptation again",
         file.string(), e.what());
  }
}

void write_adapt_report(const std::filesystem::path& path, const std::string& title,
                        const adapt::AdaptResult& result, const adapt::ResourceMeter& resource) {
  report::HtmlReport html(title);
  const double r0 = result.original.resource;
  const std::string unit(resource.unit());
  html.heading("Result");
  html.key_values({
      {"resource", fmt::format("{}: {:.4g} → {:.4g} {} ({:.1f}% of the original)",
                               adapt::resource_name(resource.kind()), r0, result.adapted.resource,
                               unit, 100.0 * result.adapted.resource / r0)},
      {"parameters", fmt::format("{} → {}", result.original.graph.parameter_count(),
                                 result.adapted.graph.parameter_count())},
      {"test accuracy",
       fmt::format("{:.4f} → {:.4f}", result.test_accuracy_original, result.test_accuracy)},
      {"held-out accuracy",
       fmt::format("{:.4f} → {:.4f}", result.original.accuracy, result.adapted.accuracy)},
      {"iterations", fmt::format("{} ({})", result.iterations.size(), result.stopped)},
      {"time", fmt::format("{:.1f} s (long-term fine-tune {:.1f} s)", result.seconds,
                           result.long_term_seconds)},
  });

  // Accuracy against the resource: every candidate, and the path of the models kept.
  report::LineChart trajectory{
      "Held-out accuracy against the resource, as a fraction of the original",
      std::string(adapt::resource_name(resource.kind())) + " / original",
      "accuracy",
      {}};
  report::Series kept{"model kept", {1.0}, {result.original.accuracy}};
  report::Series candidates{"candidates", {}, {}, true};
  for (const adapt::Iteration& it : result.iterations) {
    for (const adapt::Candidate& c : it.candidates)
      if (c.channels_after > 0 && std::isfinite(c.accuracy)) {
        candidates.x.push_back(c.resource / r0);
        candidates.y.push_back(c.accuracy);
      }
    if (it.chosen >= 0 && std::isfinite(it.accuracy)) {  // a score's choice is not evaluated
      kept.x.push_back(it.resource / r0);
      kept.y.push_back(it.accuracy);
    }
  }
  trajectory.series = {kept, candidates};
  html.svg(trajectory.render());

  // Channels per group before and after.
  const adapt::ChannelGroups before(result.original.graph), after(result.adapted.graph);
  report::BarChart channels{"Channels of each prunable group", "channels", {},
                            {"original", "adapted"},           {{}, {}},   false};
  for (int g : before.prunable()) {
    channels.categories.push_back(before.name(g));
    channels.values[0].push_back(
        static_cast<double>(before.groups()[static_cast<std::size_t>(g)].channels));
    channels.values[1].push_back(
        static_cast<double>(after.groups()[static_cast<std::size_t>(g)].channels));
  }
  html.svg(channels.render());

  // Where the time went, per iteration.
  report::BarChart time{"Where the time went, per iteration",
                        "seconds",
                        {},
                        {"simplify (channel search)", "short-term fine-tune", "evaluate"},
                        {{}, {}, {}},
                        true,
                        true};
  for (const adapt::Iteration& it : result.iterations) {
    time.categories.push_back(std::to_string(it.index + 1));
    double s = 0, f = 0, e = 0;
    for (const adapt::Candidate& c : it.candidates) {
      s += c.simplify_seconds;
      f += c.fine_tune_seconds;
      e += c.evaluate_seconds;
    }
    time.values[0].push_back(s);
    time.values[1].push_back(f);
    time.values[2].push_back(e);
  }
  if (!time.categories.empty()) html.svg(time.render());

  html.heading("Iterations");
  std::vector<std::vector<std::string>> rows;
  for (const adapt::Iteration& it : result.iterations) {
    if (it.chosen < 0) continue;
    const adapt::Candidate& c = it.candidates[static_cast<std::size_t>(it.chosen)];
    rows.push_back({std::to_string(it.index + 1), fmt::format("{:.4g}", it.constraint), c.layers,
                    fmt::format("{} → {}", c.channels_before, c.channels_after),
                    fmt::format("{:.4g}", it.resource),
                    std::isfinite(it.accuracy) ? fmt::format("{:.4f}", it.accuracy)
                                               : fmt::format("— (score {:.4g})", c.score),
                    std::to_string(it.candidates.size())});
  }
  html.table(
      {"iteration", "constraint", "group pruned", "channels", "resource", "accuracy", "candidates"},
      rows);
  html.write(path);
}

}  // namespace telar::cli
