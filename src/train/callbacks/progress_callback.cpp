#include "train/callbacks/progress_callback.hpp"

#include <fmt/format.h>

#include "core/log.hpp"

namespace telar::train {

void ProgressCallback::on_epoch_begin(const TrainState& s) {
  bar_ = std::make_unique<ProgressBar>(fmt::format("epoch {}/{}", s.epoch + 1, s.epochs),
                                       s.batches_per_epoch);
}

void ProgressCallback::on_batch_end(const TrainState& s) {
  if (bar_) bar_->update(s.batch + 1, fmt::format("loss {:.4f} acc {:.3f}", s.train.loss, s.train.accuracy));
}

void ProgressCallback::on_epoch_end(const TrainState& s) {
  if (bar_) bar_->finish(fmt::format("loss {:.4f} acc {:.3f}", s.train.loss, s.train.accuracy));
  bar_.reset();
  const double secs = s.epoch_seconds.empty() ? 0.0 : s.epoch_seconds.back();
  std::string line = fmt::format("epoch {}/{}: train loss {:.4f} accuracy {:.4f}  {:.1f}s ({:.0f} samples/s)",
                                 s.epoch + 1, s.epochs, s.train.loss, s.train.accuracy, secs,
                                 secs > 0 ? static_cast<double>(s.train.samples) / secs : 0.0);
  if (s.eval.samples > 0)
    line += fmt::format("  test loss {:.4f} accuracy {:.4f}", s.eval.loss, s.eval.accuracy);
  log::info("{}", line);
}

}  // namespace telar::train
