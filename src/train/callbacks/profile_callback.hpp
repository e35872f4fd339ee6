#pragma once
// Hardware-counter profiling of a training run: forwards the Trainer's hooks to a
// prof::TrainingProfiler (run ⊃ epoch ⊃ batch ⊃ node forward/backward, and eval), all nested in
// one continuously counting session.
#include "prof/training_profiler.hpp"
#include "train/callback.hpp"

namespace telar::train {

class ProfileCallback : public Callback {
 public:
  // `profiler` must outlive the callback.
  ProfileCallback(prof::TrainingProfiler& profiler, bool node_scopes)
      : profiler_(profiler), node_scopes_(node_scopes) {}

  void on_train_begin(const TrainState&) override;
  void on_train_end(const TrainState&) override;
  void on_epoch_begin(const TrainState& s) override;
  void on_epoch_end(const TrainState&) override;
  void on_batch_begin(const TrainState& s) override;
  void on_batch_end(const TrainState&) override;
  void on_eval_begin(const TrainState&) override;
  void on_eval_end(const TrainState&) override;
  bool wants_node_events() const override { return node_scopes_; }
  void on_node_begin(const TrainState&, const graph::Node& node, backend::Pass pass) override;
  void on_node_end(const TrainState&, const graph::Node&, backend::Pass) override;

 private:
  prof::TrainingProfiler& profiler_;
  bool node_scopes_;
  bool in_run_ = false;  // evaluations after training (a final test pass) are not in the run
};

}  // namespace telar::train
