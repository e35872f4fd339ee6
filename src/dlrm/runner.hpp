#pragma once
// The training / inference loop of dlrm_s_pytorch.py: epochs over the batches of a data source,
// SGD per batch (or forward only with inference_only), a report every print_freq batches
// (mean loss and accuracy since the last one, ms per batch), and a test pass over the test set
// every test_freq batches and at the end of each epoch.
#include <functional>
#include <optional>

#include "dlrm/data.hpp"
#include "dlrm/executor.hpp"

namespace telar::dlrm {

// Where a run stands after a batch: enough to continue it exactly (the model aside), which a
// checkpoint keeps. A run starts at RunPosition{}.
struct RunPosition {
  int epoch = 0;
  std::int64_t next_batch = 0;  // batches of `epoch` done
  // The epoch's sums, and the interval's since the last progress line.
  double epoch_loss = 0.0, interval_loss = 0.0, interval_seconds = 0.0;
  std::int64_t epoch_correct = 0, epoch_samples = 0, interval_correct = 0, interval_samples = 0,
               interval_batches = 0;
  // Over the run.
  std::int64_t samples = 0, batches = 0;
  double compute_seconds = 0.0, best_test_accuracy = 0.0;
};

struct RunOptions {
  int epochs = 1;
  float learning_rate = 0.01f;
  bool inference_only = false;
  std::int64_t print_freq = 1;
  std::int64_t test_freq = -1;  // > 0: test every N batches too
  RunPosition start;            // a resumed run's position
};

struct IntervalReport {
  int epoch = 0;
  std::int64_t batch = 0;  // batches done in this epoch (1-based, as DLRM prints)
  std::int64_t batches = 0;
  double ms_per_batch = 0.0;
  double loss = 0.0;  // mean over the samples of the interval
  double accuracy = 0.0;
  std::int64_t samples = 0;
};

struct TestReport {
  int epoch = 0;
  std::int64_t batch = 0;
  std::int64_t batches = 0;
  double loss = 0.0;
  double accuracy = 0.0;
  double auc = 0.0;  // NaN without both classes (or with non-binary targets)
  double best_accuracy = 0.0;
  std::int64_t samples = 0;
  double seconds = 0.0;
};

struct RunSummary {
  double loss = 0.0;  // the last epoch, whole
  double accuracy = 0.0;
  std::int64_t samples = 0;  // processed over all epochs
  std::int64_t batches = 0;
  double compute_seconds = 0.0;  // forward, backward and update (data preparation excluded)
  double wall_seconds = 0.0;
  std::optional<TestReport> test;  // the last test pass
  double best_test_accuracy = 0.0;
  ComponentTimes times;  // per component, over the whole run
  // sim: the simulator's figures per component over the run's forward passes (test passes
  // included).
  std::optional<SimulationSummary> simulation;
  double samples_per_s() const { return compute_seconds > 0 ? samples / compute_seconds : 0.0; }
};

struct RunCallbacks {
  std::function<void(const IntervalReport&)> on_interval;
  std::function<void(const TestReport&)> on_test;
  // Asked to stop (StopOnSignal): called at the batch boundary with the position there (save
  // a checkpoint), before run_dlrm throws telar::Interrupted.
  std::function<void(const RunPosition&)> on_interrupt;
};

// Runs from options.start; after each batch, stops if a signal asked to (see on_interrupt).
RunSummary run_dlrm(Executor& exe, DataSource& train, DataSource* test, const RunOptions& options,
                    const RunCallbacks& callbacks = {});

// One pass over `data` without training: mean loss, accuracy and AUC.
TestReport evaluate(Executor& exe, DataSource& data);

}  // namespace telar::dlrm
