#pragma once
// Writes the run's checkpoint at the end of every epoch (and every N optimizer steps or every
// so many minutes if asked), atomically, so the file on disk is always the last good state.
#include <cstdint>
#include <filesystem>
#include <string>

#include "core/clock.hpp"
#include "train/callback.hpp"
#include "train/checkpoint.hpp"
#include "train/trainer.hpp"

namespace telar::train {

// Trainer progress <-> the checkpoint's trainer state.
TrainerState to_trainer_state(const Progress& progress, const std::string& config_json);
Progress to_progress(const TrainerState& state);

// How often to write the checkpoint within an epoch (--checkpoint-every): every `steps`
// optimizer steps, or at the first batch end once `seconds` have passed since the last write
// (0: only at epoch ends).
struct CheckpointInterval {
  std::int64_t steps = 0;
  double seconds = 0.0;
};
// "500" (steps), "90s", "10min", "2h"; "0" is never. Throws telar::Error naming the flag.
CheckpointInterval parse_checkpoint_interval(const std::string& text);

// Whether every float parameter and buffer is finite (a diverged run's are not).
bool parameters_finite(const graph::ParameterSet& params);

// Writes only finite states: once the parameters hold a NaN or an infinity the file on disk
// stays the last finite state, and a warning says so.
class CheckpointCallback : public Callback {
 public:
  CheckpointCallback(std::filesystem::path path, const graph::Graph& graph,
                     const graph::ParameterSet& params, const Optimizer& optimizer,
                     const Trainer& trainer, std::string config_json,
                     CheckpointInterval every = {});
  void on_batch_end(const TrainState& s) override;
  void on_epoch_end(const TrainState& s) override;
  // Writes the checkpoint now (the trainer stands at a batch boundary: a stop on a signal).
  void save_now() { save(); }
  const std::filesystem::path& path() const { return path_; }
  bool written() const { return written_; }

 private:
  void save();
  std::filesystem::path path_;
  const graph::Graph& graph_;
  const graph::ParameterSet& params_;
  const Optimizer& optimizer_;
  const Trainer& trainer_;
  std::string config_json_;
  CheckpointInterval every_;
  Stopwatch since_write_;
  bool written_ = false;
  bool refused_ = false;
};

}  // namespace telar::train
