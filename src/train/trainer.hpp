#pragma once
// The one training loop for classification models: batches from a DataLoader through a
// compiled training graph (model + loss), an optimizer step per batch, an evaluation pass per
// epoch, and callbacks at every hook point. Deterministic: the data order is a function of
// (seed, epoch), dropout masks of the global step, so a resumed run repeats an uninterrupted
// one exactly.
#include <memory>
#include <vector>

#include "backend/executable.hpp"
#include "core/error.hpp"
#include "train/callback.hpp"
#include "train/data/batch_source.hpp"
#include "train/optim/lr_schedule.hpp"
#include "train/optim/optimizer.hpp"
#include "train/replica_group.hpp"

namespace telar::train {

struct TrainerOptions {
  int epochs = 1;
  std::int64_t limit_batches = 0;  // > 0: at most this many training batches per epoch
};

// Where a run stands: what a checkpoint must hold (besides parameters and optimizer state)
// for --resume to continue exactly.
struct Progress {
  int epoch = 0;                  // the epoch to run (or continue)
  std::int64_t next_batch = 0;    // the batch of that epoch to run next
  std::int64_t global_step = 0;
  // Running sums of the epoch in progress (so a mid-epoch resume reports whole-epoch figures).
  double loss_sum = 0.0;
  std::int64_t correct = 0;
  std::int64_t samples = 0;
  double seconds = 0.0;
  std::vector<double> epoch_seconds;
  std::string group_state;  // ReplicaGroup::state() in effect for `epoch` (data parallelism)
};

// The loss became NaN or infinite: the run stops; checkpoints written before stay valid.
class NonFiniteLoss : public Error {
 public:
  NonFiniteLoss(const std::string& message, int epoch, std::int64_t batch, std::int64_t step)
      : Error(message), epoch(epoch), batch(batch), step(step) {}
  int epoch;
  std::int64_t batch;
  std::int64_t step;
};

class Trainer : private backend::NodeObserver {
 public:
  // `exe` runs a training graph: inputs {images, labels}, outputs {logits, loss}
  // (graph::with_loss). `params` are the tensors `exe` was compiled over.
  Trainer(backend::Executable& exe, graph::ParameterSet& params, Optimizer& optimizer,
          LrSchedule schedule, TrainerOptions options);
  // Leaves `exe` without an observer if this trainer was it (another trainer may run it next).
  ~Trainer() override;
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  void add_callback(Callback* callback);
  // Makes this trainer one replica of `group` (null: a lone trainer). Batches may then be
  // empty; losses, accuracies and evaluations are the group's.
  void set_group(ReplicaGroup* group) { group_ = group; }
  void set_progress(const Progress& progress) { progress_ = progress; }
  const Progress& progress() const { return progress_; }
  const TrainState& state() const { return state_; }

  // Trains until options.epochs; evaluates on `eval` (may be null) after each epoch.
  void fit(BatchSource& train, BatchSource* eval);
  // One evaluation pass (no parameter change); fires on_eval_begin/end.
  PhaseMetrics evaluate(BatchSource& data);

 private:
  void on_node_begin(const graph::Node& node, backend::Pass pass) override;
  void on_node_end(const graph::Node& node, backend::Pass pass) override;
  // Forward, backward and optimizer step on one batch; returns the step's loss and #correct
  // and #samples (the group's when there is one).
  struct StepResult {
    double loss;
    std::int64_t correct, samples;
    // The signal that asks to stop after this batch, 0 for none. In a group the members agree
    // on it in the same sum as the loss, so all of them stop after the same batch.
    int stop_signal;
  };
  StepResult train_batch(const Batch& batch);

  backend::Executable& exe_;
  graph::ParameterSet& params_;
  Optimizer& optimizer_;
  LrSchedule schedule_;
  TrainerOptions options_;
  ReplicaGroup* group_ = nullptr;
  std::vector<Callback*> callbacks_;
  std::vector<Callback*> node_callbacks_;
  std::vector<graph::ValueId> parameter_ids_;
  Progress progress_;
  TrainState state_;
  Tensor loss_seed_;
  std::vector<Tensor> inputs_;
  std::vector<Tensor> output_grads_;
};

}  // namespace telar::train
