#pragma once
// Writes the run's checkpoint at the end of every epoch (and every N optimizer steps if asked),
// atomically, so the file on disk is always the last good state.
#include <filesystem>

#include "train/callback.hpp"
#include "train/checkpoint.hpp"
#include "train/trainer.hpp"

namespace telar::train {

// Trainer progress <-> the checkpoint's trainer state.
TrainerState to_trainer_state(const Progress& progress, const std::string& config_json);
Progress to_progress(const TrainerState& state);

// Whether every float parameter and buffer is finite (a diverged run's are not).
bool parameters_finite(const graph::ParameterSet& params);

// Writes only finite states: once the parameters hold a NaN or an infinity the file on disk
// stays the last finite state, and a warning says so.
class CheckpointCallback : public Callback {
 public:
  CheckpointCallback(std::filesystem::path path, const graph::Graph& graph,
                     const graph::ParameterSet& params, const Optimizer& optimizer,
                     const Trainer& trainer, std::string config_json,
                     std::int64_t every_steps = 0);
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
  std::int64_t every_steps_;
  bool written_ = false;
  bool refused_ = false;
};

}  // namespace telar::train
