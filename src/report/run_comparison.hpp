#pragma once
// telar compare: runs side by side against a baseline, as the seed-002 thesis' Table 4.2 and
// its speed-up figure: speed-up S = T_base / T, parallel efficiency S / (n / n_base) for runs
// on n devices, energy (used devices; and with idle devices), and the energy-delay product
// EDP = t x E normalised to the baseline's (t: the energy measurement's duration).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace telar::report {

struct RunFigures {
  std::string name;     // the run directory's name
  std::string command;  // "train", "energy", ...
  std::string devices_text;  // e.g. "cpu:threads=1,cpu:threads=1"
  int devices = 1;      // workers of a data-parallel run, else 1
  double seconds = 0.0;
  std::optional<double> accuracy;  // test accuracy of a training run
  // Energy, when it was measured.
  std::optional<double> energy_used_joules, energy_all_joules, energy_seconds;
};

// What is compared: "loop" (training with per-epoch evaluation, the thesis' training time),
// "train" (training phases only) or "total" (loop and final test). Non-training runs
// (telar energy) use their command's duration whatever the choice.
enum class TimeBasis { Loop, Train, Total };
TimeBasis parse_time_basis(const std::string& text);

// Reads RUN/run.json (or a run.json path). Throws telar::Error naming the file when it is
// missing, not a finished run, or lacks the figures.
RunFigures read_run_figures(const std::filesystem::path& run, TimeBasis basis);

struct ComparisonRow {
  RunFigures run;
  double speedup = 0.0;
  double efficiency = 0.0;
  std::optional<double> edp, edp_all;  // normalised to the baseline's (when both measured)
  std::optional<double> energy_ratio;  // E_used / E_used of the baseline
};

std::vector<ComparisonRow> compare_runs(const std::vector<RunFigures>& runs, std::size_t baseline);
std::string format_comparison(const std::vector<ComparisonRow>& rows, std::size_t baseline);
nlohmann::json comparison_json(const std::vector<ComparisonRow>& rows, std::size_t baseline);

}  // namespace telar::report
