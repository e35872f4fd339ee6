#include "report/run_comparison.hpp"

#include <fmt/format.h>

#include <fstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/parse.hpp"

namespace telar::report {

namespace fs = std::filesystem;

TimeBasis parse_time_basis(const std::string& text) {
  if (text == "loop") return TimeBasis::Loop;
  if (text == "train") return TimeBasis::Train;
  if (text == "total") return TimeBasis::Total;
  fail("--time {}: use loop (training with per-epoch evaluation), train or total", text);
}

RunFigures read_run_figures(const fs::path& run, TimeBasis basis) {
  const bool directory = is_dir(run);  // a name the file system refuses: unreadable below
  const fs::path file = directory ? run / "run.json" : run;
  std::ifstream in(file);
  if (!in) fail("{}: no run.json there; give run directories written by telar", run.string());
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object() || !j.contains("command"))
    fail("{}: not a telar run.json (unreadable or no \"command\")", file.string());
  if (!j.contains("result"))
    fail("{}: the run has no result (status: {}); compare finished runs", file.string(),
         j.value("status", std::string("unknown")));
  const nlohmann::json& r = j["result"];
  RunFigures f;
  f.name = (directory ? run : run.parent_path()).filename().string();
  f.command = j["command"].get<std::string>();
  if (f.command == "train") {
    const nlohmann::json& c = j.value("config", nlohmann::json::object());
    f.devices_text = c.value("backend", std::string());
    if (r.contains("data_parallel")) f.devices = r["data_parallel"].value("workers", 1);
    const char* key = basis == TimeBasis::Loop ? "loop_seconds"
                      : basis == TimeBasis::Train ? "train_seconds"
                                                  : "total_seconds";
    if (!r.contains(key)) fail("{}: the result has no {}; was it written by an older telar?", file.string(), key);
    f.seconds = r[key].get<double>();
    if (r.contains("test")) f.accuracy = r["test"].value("accuracy", 0.0);
  } else {
    if (!r.contains("seconds")) fail("{}: the result has no duration (\"seconds\")", file.string());
    f.seconds = r["seconds"].get<double>();
    f.devices_text = r.value("command_line", std::string());
  }
  if (r.contains("energy") && r["energy"].value("measured", false)) {
    const nlohmann::json& e = r["energy"];
    f.energy_used_joules = e.value("used_joules", 0.0);
    f.energy_all_joules = e.value("all_joules", 0.0);
    f.energy_seconds = e.value("seconds", 0.0);
  }
  require(f.seconds > 0, "{}: the run took {} s; nothing to compare", file.string(), f.seconds);
  return f;
}

std::vector<ComparisonRow> compare_runs(const std::vector<RunFigures>& runs, std::size_t baseline) {
  require(baseline < runs.size(), "internal: baseline {} of {} runs", baseline, runs.size());
  const RunFigures& b = runs[baseline];
  const bool base_energy = b.energy_used_joules && *b.energy_seconds > 0 && *b.energy_used_joules > 0;
  std::vector<ComparisonRow> rows;
  for (const RunFigures& f : runs) {
    ComparisonRow row;
    row.run = f;
    row.speedup = b.seconds / f.seconds;
    row.efficiency = row.speedup / (static_cast<double>(f.devices) / static_cast<double>(b.devices));
    if (base_energy && f.energy_used_joules) {
      row.energy_ratio = *f.energy_used_joules / *b.energy_used_joules;
      row.edp = (*f.energy_seconds * *f.energy_used_joules) / (*b.energy_seconds * *b.energy_used_joules);
      if (*b.energy_all_joules > 0)
        row.edp_all = (*f.energy_seconds * *f.energy_all_joules) / (*b.energy_seconds * *b.energy_all_joules);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

namespace {
std::string opt(const std::optional<double>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
}
}  // namespace

std::string format_comparison(const std::vector<ComparisonRow>& rows, std::size_t baseline) {
  std::string out = fmt::format("{:<28} {:>3} {:>10} {:>8} {:>7} {:>12} {:>12} {:>8} {:>9} {:>8}\n", "run",
                                "n", "time (s)", "speed-up", "effic.", "energy (J)", "+idle (J)",
                                "EDP", "EDP+idle", "acc.");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ComparisonRow& r = rows[i];
    std::string name = r.run.name + (i == baseline ? " *" : "");
    if (name.size() > 28) name = name.substr(0, 25) + "...";
    out += fmt::format("{:<28} {:>3} {:>10.2f} {:>8.3f} {:>7.3f} {:>12} {:>12} {:>8} {:>9} {:>8}\n", name,
                       r.run.devices, r.run.seconds, r.speedup, r.efficiency,
                       opt(r.run.energy_used_joules, "{:.4g}"), opt(r.run.energy_all_joules, "{:.4g}"),
                       opt(r.edp, "{:.4f}"), opt(r.edp_all, "{:.4f}"),
                       opt(r.run.accuracy, "{:.4f}"));
  }
  out += "* baseline. speed-up = T_base / T; efficiency = speed-up / (n / n_base); EDP = t x E "
         "(used devices; +idle: all measured devices), normalised to the baseline\n";
  return out;
}

nlohmann::json comparison_json(const std::vector<ComparisonRow>& rows, std::size_t baseline) {
  nlohmann::json runs = nlohmann::json::array();
  for (const ComparisonRow& r : rows) {
    nlohmann::json j = {{"name", r.run.name},     {"command", r.run.command},
                        {"devices", r.run.devices}, {"seconds", r.run.seconds},
                        {"speedup", r.speedup},     {"efficiency", r.efficiency}};
    if (r.run.accuracy) j["accuracy"] = *r.run.accuracy;
    if (r.run.energy_used_joules) {
      j["energy_joules"] = *r.run.energy_used_joules;
      j["energy_all_joules"] = *r.run.energy_all_joules;
    }
    if (r.edp) j["edp"] = *r.edp;
    if (r.edp_all) j["edp_all"] = *r.edp_all;
    runs.push_back(j);
  }
  return {{"baseline", rows.at(baseline).run.name}, {"runs", runs}};
}

}  // namespace telar::report
