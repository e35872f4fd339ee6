// telar compare RUN...: runs side by side against a baseline (speed-up, parallel efficiency,
// energy, EDP normalised), as the seed-002 thesis' Table 4.2.
#include <fmt/format.h>

#include <iostream>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "report/run_comparison.hpp"

namespace telar::cli {

int run_compare(const Args& args) {
  CLI::App app{"Compare runs against a baseline: speed-up, parallel efficiency, energy and the "
               "energy-delay product normalised to the baseline (the thesis' Table 4.2)",
               "compare"};
  std::vector<std::string> runs;
  std::string baseline, time = "loop";
  bool json = false;
  app.add_option("runs", runs, "run directories (telar train, telar energy)")->required();
  app.add_option("--baseline", baseline, "the run the others are compared to (default: the first)");
  app.add_option("--time", time,
                 "training time compared: loop (training with per-epoch evaluation, as the "
                 "thesis) | train (training phases only) | total (with the final test)");
  app.add_flag("--json", json, "print the comparison as one JSON object on the last line");
  int code = 0;
  if (!parse(app, args, "compare", &code)) return code;
  const report::TimeBasis basis = report::parse_time_basis(time);
  std::size_t base = 0;
  if (!baseline.empty()) {
    const auto it = std::find(runs.begin(), runs.end(), baseline);
    if (it == runs.end()) {
      runs.insert(runs.begin(), baseline);
    } else {
      base = static_cast<std::size_t>(it - runs.begin());
    }
  }
  std::vector<report::RunFigures> figures;
  for (const std::string& r : runs) figures.push_back(report::read_run_figures(r, basis));
  const auto rows = report::compare_runs(figures, base);
  std::cout << report::format_comparison(rows, base);
  if (json) print_json(report::comparison_json(rows, base));
  return 0;
}

}  // namespace telar::cli
