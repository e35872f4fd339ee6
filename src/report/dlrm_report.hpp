#pragma once
// The run directory of `telar dlrm`: metrics.csv (tidy rows: epoch, batch, phase, metric, value)
// and report.html, written when the run ends: the model summary, loss / accuracy / AUC curves,
// the time per component (Bottom MLP, EmbeddingBags, Interaction, Top MLP) as a table and a
// stacked bar, and the result.
#include <string>
#include <utility>
#include <vector>

#include "dlrm/benchmark.hpp"
#include "dlrm/runner.hpp"
#include "report/run_dir.hpp"

namespace telar::report {

class DlrmRecorder {
 public:
  // `resumed`: the run continues; its metrics.csv so far is read and continued.
  DlrmRecorder(const RunDirectory& run, std::string title,
               std::vector<std::pair<std::string, std::string>> summary, std::string model_summary,
               bool resumed = false);
  void on_interval(const dlrm::IntervalReport& r);
  void on_test(const dlrm::TestReport& r);
  // Writes metrics.csv and report.html for a finished run (or benchmark).
  void finish(const dlrm::RunSummary* run, const dlrm::BenchmarkResult* bench);
  // Writes metrics.csv as it stands (a run stopped midway, to be resumed).
  void write_metrics() const;
  const MetricsTable& metrics() const { return metrics_; }

 private:
  const RunDirectory& run_;
  std::string title_;
  std::vector<std::pair<std::string, std::string>> summary_;
  std::string model_summary_;
  MetricsTable metrics_;
};

}  // namespace telar::report
