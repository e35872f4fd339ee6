#pragma once
// A progress bar per epoch (on a terminal; plain lines otherwise) and one summary line per
// epoch on stderr.
#include <memory>

#include "core/progress.hpp"
#include "train/callback.hpp"

namespace telar::train {

class ProgressCallback : public Callback {
 public:
  void on_epoch_begin(const TrainState& s) override;
  void on_batch_end(const TrainState& s) override;
  void on_epoch_end(const TrainState& s) override;

 private:
  std::unique_ptr<ProgressBar> bar_;
};

}  // namespace telar::train
