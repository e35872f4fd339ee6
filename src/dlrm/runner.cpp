#include "dlrm/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "dlrm/metrics.hpp"

namespace telar::dlrm {

TestReport evaluate(Executor& exe, DataSource& data) {
  TestReport r;
  Stopwatch sw;
  DlrmBatch batch;
  std::vector<float> scores, labels;
  double loss_sum = 0.0;
  std::int64_t correct = 0;
  for (std::int64_t j = 0; j < data.batches(); ++j) {
    data.batch(j, batch);
    const std::int64_t n = batch.size();
    const float loss = exe.forward(batch, false);
    const float* p = exe.probabilities().f32();
    const float* t = batch.target.f32();
    loss_sum += static_cast<double>(loss) * static_cast<double>(n);
    correct += count_correct(p, t, n);
    scores.insert(scores.end(), p, p + n);
    labels.insert(labels.end(), t, t + n);
    r.samples += n;
  }
  r.batches = data.batches();
  r.loss = r.samples > 0 ? loss_sum / static_cast<double>(r.samples) : 0.0;
  r.accuracy = r.samples > 0 ? static_cast<double>(correct) / static_cast<double>(r.samples) : 0.0;
  r.auc =
      data.binary_targets() ? roc_auc(scores, labels) : std::numeric_limits<double>::quiet_NaN();
  r.seconds = sw.seconds();
  return r;
}

RunSummary run_dlrm(Executor& exe, DataSource& train, DataSource* test, const RunOptions& o,
                    const RunCallbacks& callbacks) {
  require(o.epochs > 0, "--nepochs must be positive, got {}", o.epochs);
  require(o.print_freq > 0, "--print-freq must be positive, got {}", o.print_freq);
  require(std::isfinite(o.learning_rate) && o.learning_rate > 0.0f,
          "--learning-rate must be a positive number, got {}", o.learning_rate);
  RunSummary s;
  Stopwatch wall;
  exe.reset_times();
  DlrmBatch batch;
  const std::int64_t batches = train.batches();
  RunPosition at = o.start;
  auto run_test = [&](int epoch, std::int64_t j) {
    TestReport r = evaluate(exe, *test);
    r.epoch = epoch;
    r.batch = j;
    r.batches = batches;
    at.best_test_accuracy = std::max(at.best_test_accuracy, r.accuracy);
    r.best_accuracy = at.best_test_accuracy;
    s.test = r;
    if (callbacks.on_test) callbacks.on_test(r);
  };
  for (; at.epoch < o.epochs; ++at.epoch) {
    for (std::int64_t j = at.next_batch; j < batches; ++j) {
      train.batch(j, batch);
      const std::int64_t n = batch.size();
      Stopwatch sw;
      const float loss = exe.forward(batch, !o.inference_only);
      if (!std::isfinite(loss))
        fail("the loss became {} at batch {} of epoch {}; lower --learning-rate", loss, j + 1,
             at.epoch);
      if (!o.inference_only) {
        exe.backward();
        exe.step(o.learning_rate);
      }
      const double secs = sw.seconds();
      const std::int64_t correct = count_correct(exe.probabilities().f32(), batch.target.f32(), n);
      at.compute_seconds += secs;
      at.samples += n;
      ++at.batches;
      at.epoch_loss += static_cast<double>(loss) * static_cast<double>(n);
      at.epoch_correct += correct;
      at.epoch_samples += n;
      at.interval_loss += static_cast<double>(loss) * static_cast<double>(n);
      at.interval_correct += correct;
      at.interval_samples += n;
      at.interval_seconds += secs;
      ++at.interval_batches;
      at.next_batch = j + 1;
      const bool print = (j + 1) % o.print_freq == 0 || j + 1 == batches;
      const bool do_test = test && !o.inference_only && o.test_freq > 0 &&
                           (j + 1) % o.test_freq == 0 && j + 1 != batches;
      if (print || do_test) {
        IntervalReport r;
        r.epoch = at.epoch;
        r.batch = j + 1;
        r.batches = batches;
        r.ms_per_batch = 1e3 * at.interval_seconds / static_cast<double>(at.interval_batches);
        r.loss = at.interval_loss / static_cast<double>(at.interval_samples);
        r.accuracy =
            static_cast<double>(at.interval_correct) / static_cast<double>(at.interval_samples);
        r.samples = at.interval_samples;
        if (callbacks.on_interval) callbacks.on_interval(r);
        at.interval_loss = at.interval_seconds = 0.0;
        at.interval_correct = at.interval_samples = at.interval_batches = 0;
      }
      if (do_test) run_test(at.epoch, j + 1);
      if (const int signal = stop_signal()) {
        if (callbacks.on_interrupt) callbacks.on_interrupt(at);
        throw Interrupted(fmt::format("interrupted by {} after batch {} of {} in epoch {}",
                                      signal_name(signal), j + 1, batches, at.epoch + 1),
                          signal);
      }
    }
    s.loss = at.epoch_loss / static_cast<double>(std::max<std::int64_t>(at.epoch_samples, 1));
    s.accuracy = static_cast<double>(at.epoch_correct) /
                 static_cast<double>(std::max<std::int64_t>(at.epoch_samples, 1));
    if (test && !o.inference_only) run_test(at.epoch, batches);
    at.next_batch = 0;
    at.epoch_loss = 0.0;
    at.epoch_correct = at.epoch_samples = 0;
  }
  s.samples = at.samples;
  s.batches = at.batches;
  s.compute_seconds = at.compute_seconds;
  s.best_test_accuracy = at.best_test_accuracy;
  s.times = exe.times();
  if (const SimulationSummary* sim = exe.simulation()) s.simulation = *sim;
  s.wall_seconds = wall.seconds();
  return s;
}

}  // namespace telar::dlrm
