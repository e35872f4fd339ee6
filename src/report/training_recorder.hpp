#pragma once
// Records a training run's metrics (tidy metrics.csv, rewritten after every epoch) and writes
// its report.html (loss and accuracy curves, epoch table) when training ends.
#include <string>
#include <utility>
#include <vector>

#include "report/run_dir.hpp"
#include "train/callback.hpp"

namespace telar::report {

class TrainingRecorder : public train::Callback {
 public:
  // `summary`: key/value lines shown at the top of the report (model, optimizer, ...).
  // `resume_at_epoch` >= 0: a resumed run; rows of earlier epochs already in metrics.csv are
  // kept (later ones, from the interrupted attempt, are dropped).
  TrainingRecorder(const RunDirectory& run, std::string title,
                   std::vector<std::pair<std::string, std::string>> summary,
                   int resume_at_epoch = -1);
  void on_batch_end(const train::TrainState& s) override;
  void on_epoch_end(const train::TrainState& s) override;
  void on_train_end(const train::TrainState& s) override;

  const MetricsTable& metrics() const { return metrics_; }
  void write_report() const;

 private:
  const RunDirectory& run_;
  std::string title_;
  std::vector<std::pair<std::string, std::string>> summary_;
  MetricsTable metrics_;
};

}  // namespace telar::report
