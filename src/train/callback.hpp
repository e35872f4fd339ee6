#pragma once
// Every cross-cutting concern of training (progress bar, metric writer, checkpointer,
// profiler, energy meter) is a Callback; the Trainer loop knows none of them.
#include <cstdint>
#include <string>
#include <vector>

#include "backend/executable.hpp"
#include "graph/graph.hpp"

namespace telar::train {

struct PhaseMetrics {
  double loss = 0.0;
  double accuracy = 0.0;      // fraction in [0, 1]
  std::int64_t samples = 0;
  double seconds = 0.0;
};

// What callbacks see of the run; the Trainer updates it before each hook.
struct TrainState {
  int epoch = 0;                        // 0-based
  int epochs = 0;
  std::int64_t batch = 0;               // batch index within the epoch (train or eval)
  std::int64_t batches_per_epoch = 0;
  std::int64_t eval_batches = 0;
  std::int64_t global_step = 0;         // optimizer steps done so far
  std::int64_t batch_size = 0;          // size of the current batch
  double lr = 0.0;
  double batch_loss = 0.0;              // last training batch
  double batch_accuracy = 0.0;
  PhaseMetrics train;                   // running (during the epoch) / final (at epoch end)
  PhaseMetrics eval;                    // after on_eval_end
  std::vector<double> epoch_seconds;    // training phase of each finished epoch
  bool evaluating = false;
};

class Callback {
 public:
  virtual ~Callback() = default;
  virtual void on_train_begin(const TrainState&) {}
  virtual void on_train_end(const TrainState&) {}
  virtual void on_epoch_begin(const TrainState&) {}
  virtual void on_epoch_end(const TrainState&) {}
  virtual void on_batch_begin(const TrainState&) {}
  virtual void on_batch_end(const TrainState&) {}
  virtual void on_eval_begin(const TrainState&) {}
  virtual void on_eval_end(const TrainState&) {}
  // Around each node's kernels, forward and backward apart (only if wants_node_events()).
  virtual bool wants_node_events() const { return false; }
  virtual void on_node_begin(const TrainState&, const graph::Node&, backend::Pass) {}
  virtual void on_node_end(const TrainState&, const graph::Node&, backend::Pass) {}
};

}  // namespace telar::train
