#include "train/trainer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <csignal>

#include "core/clock.hpp"
#include "core/interrupt.hpp"
#include "train/evaluate.hpp"

namespace telar::train {

Trainer::Trainer(backend::Executable& exe, graph::ParameterSet& params, Optimizer& optimizer,
                 LrSchedule schedule, TrainerOptions options)
    : exe_(exe),
      params_(params),
      optimizer_(optimizer),
      schedule_(schedule),
      options_(options),
      parameter_ids_(exe.graph().parameters()),
      loss_seed_(Shape{}),
      inputs_(2),
      output_grads_(2) {
  const auto& g = exe.graph();
  require(g.inputs().size() == 2 && g.outputs().size() == 2,
          "internal: the trainer needs a training graph (inputs: images, labels; outputs: "
          "logits, loss), got {} inputs and {} outputs",
          g.inputs().size(), g.outputs().size());
  loss_seed_.f32()[0] = 1.0f;
  output_grads_[1] = loss_seed_;
  state_.epochs = options.epochs;
}

Trainer::~Trainer() {
  if (exe_.observer() == this) exe_.set_observer(nullptr);
}

void Trainer::add_callback(Callback* callback) {
  callbacks_.push_back(callback);
  if (callback->wants_node_events()) node_callbacks_.push_back(callback);
  exe_.set_observer(node_callbacks_.empty() ? nullptr : this);
}

void Trainer::on_node_begin(const graph::Node& node, backend::Pass pass) {
  for (Callback* c : node_callbacks_) c->on_node_begin(state_, node, pass);
}

void Trainer::on_node_end(const graph::Node& node, backend::Pass pass) {
  for (Callback* c : node_callbacks_) c->on_node_end(state_, node, pass);
}

Trainer::StepResult Trainer::train_batch(const Batch& batch) {
  inputs_[0] = batch.images;
  inputs_[1] = batch.labels;
  exe_.set_random_stream(static_cast<std::uint64_t>(progress_.global_step));
  exe_.forward(inputs_, backend::Mode::Train);
  const double local_loss = batch.size > 0 ? exe_.output(1).f32()[0] : 0.0;
  const std::int64_t local_correct = batch.size > 0 ? count_correct(exe_.output(0), batch.labels) : 0;
  // Backward runs before the loss is checked: in a group, the check needs every replica's
  // loss (all must stop together), and a non-finite gradient is harmless until applied.
  exe_.backward(output_grads_);
  StepResult r{local_loss, local_correct, batch.size, stop_signal()};
  if (group_) {
    double totals[4] = {local_loss * static_cast<double>(batch.size),
                        static_cast<double>(local_correct), static_cast<double>(batch.size),
                        r.stop_signal != 0 ? 1.0 : 0.0};
    group_->sum(totals);
    r.samples = static_cast<std::int64_t>(totals[2]);
    r.correct = static_cast<std::int64_t>(totals[1]);
    r.loss = r.samples > 0 ? totals[0] / totals[2] : 0.0;
    // Some member was asked to stop (with MPI each rank has its own signals; mpirun passes
    // SIGTERM on): every member stops, naming its own signal if it had one.
    if (totals[3] > 0.0 && r.stop_signal == 0)
      r.stop_signal = stop_signal() != 0 ? stop_signal() : SIGTERM;
  }
  if (!std::isfinite(r.loss)) {
    throw NonFiniteLoss(
        fmt::format("the training loss became {} at epoch {} batch {} (step {}); training "
                    "stopped. Lower --lr or check the data",
                    r.loss, progress_.epoch, batch.index, progress_.global_step),
        progress_.epoch, batch.index, progress_.global_step);
  }
  const double lr = schedule_.at(progress_.global_step, progress_.epoch);
  optimizer_.step(params_, exe_.gradients(), parameter_ids_, static_cast<float>(lr));
  exe_.parameters_updated();
  state_.lr = lr;
  return r;
}

PhaseMetrics Trainer::evaluate(BatchSource& data) {
  state_.evaluating = true;
  state_.eval_batches = data.batches_per_epoch();
  for (Callback* c : callbacks_) c->on_eval_begin(state_);
  state_.eval = evaluate_classifier(exe_, data, [this](std::int64_t batch, std::int64_t size) {
    state_.batch = batch;
    state_.batch_size = size;
  });
  if (group_) {
    const double n = static_cast<double>(state_.eval.samples);
    double totals[3] = {state_.eval.loss * n, std::round(state_.eval.accuracy * n), n};
    group_->sum(totals);
    state_.eval.samples = static_cast<std::int64_t>(totals[2]);
    state_.eval.loss = totals[2] > 0 ? totals[0] / totals[2] : 0.0;
    state_.eval.accuracy = totals[2] > 0 ? totals[1] / totals[2] : 0.0;
  }
  for (Callback* c : callbacks_) c->on_eval_end(state_);
  state_.evaluating = false;
  return state_.eval;
}

void Trainer::fit(BatchSource& train, BatchSource* eval) {
  std::int64_t per_epoch = train.batches_per_epoch();
  if (options_.limit_batches > 0) per_epoch = std::min(per_epoch, options_.limit_batches);
  state_.batches_per_epoch = per_epoch;
  state_.epoch_seconds = progress_.epoch_seconds;
  state_.global_step = progress_.global_step;
  if (group_) progress_.group_state = group_->state();
  for (Callback* c : callbacks_) c->on_train_begin(state_);
  while (progress_.epoch < options_.epochs) {
    state_.epoch = progress_.epoch;
    if (progress_.next_batch == 0) {
      progress_.loss_sum = 0.0;
      progress_.correct = 0;
      progress_.samples = 0;
      progress_.seconds = 0.0;
    }
    for (Callback* c : callbacks_) c->on_epoch_begin(state_);
    for (std::int64_t i = progress_.next_batch; i < per_epoch; ++i) {
      Stopwatch sw;
      const Batch& b = train.batch(progress_.epoch, i);
      state_.batch = i;
      state_.batch_size = b.size;
      state_.global_step = progress_.global_step;
      for (Callback* c : callbacks_) c->on_batch_begin(state_);
      const StepResult step = train_batch(b);
      ++progress_.global_step;
      progress_.next_batch = i + 1;
      progress_.loss_sum += step.loss * static_cast<double>(step.samples);
      progress_.correct += step.correct;
      progress_.samples += step.samples;
      progress_.seconds += sw.seconds();
      state_.global_step = progress_.global_step;
      state_.batch_size = step.samples;
      state_.batch_loss = step.loss;
      const double samples = static_cast<double>(std::max<std::int64_t>(progress_.samples, 1));
      state_.batch_accuracy = static_cast<double>(step.correct) /
                              static_cast<double>(std::max<std::int64_t>(step.samples, 1));
      state_.train.samples = progress_.samples;
      state_.train.loss = progress_.loss_sum / samples;
      state_.train.accuracy = static_cast<double>(progress_.correct) / samples;
      state_.train.seconds = progress_.seconds;
      for (Callback* c : callbacks_) c->on_batch_end(state_);
      // Asked to stop (StopOnSignal): at this batch boundary, where a checkpoint can resume;
      // a group's members all at the same one.
      if (step.stop_signal != 0)
        throw Interrupted(
            fmt::format("interrupted by {} after batch {} of {} in epoch {}",
                        signal_name(step.stop_signal), i + 1, per_epoch, progress_.epoch + 1),
            step.stop_signal);
    }
    progress_.epoch_seconds.push_back(progress_.seconds);
    state_.epoch_seconds = progress_.epoch_seconds;
    if (group_) {
      group_->end_epoch(progress_.epoch);
      progress_.group_state = group_->state();
    }
    if (eval) evaluate(*eval);
    // From here the resume point is the start of the next epoch (what a checkpoint written
    // by on_epoch_end must record); state_.epoch still names the finished one.
    ++progress_.epoch;
    progress_.next_batch = 0;
    for (Callback* c : callbacks_) c->on_epoch_end(state_);
  }
  for (Callback* c : callbacks_) c->on_train_end(state_);
}

}  // namespace telar::train
