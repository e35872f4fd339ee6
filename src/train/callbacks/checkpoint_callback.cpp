#include "train/callbacks/checkpoint_callback.hpp"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/log.hpp"

namespace telar::train {

TrainerState to_trainer_state(const Progress& p, const std::string& config_json) {
  TrainerState s;
  s.epoch = p.epoch;
  s.step_in_epoch = p.next_batch;
  s.global_step = p.global_step;
  s.config_json = config_json;
  s.progress_json = nlohmann::json{{"loss_sum", p.loss_sum},
                                   {"correct", p.correct},
                                   {"samples", p.samples},
                                   {"seconds", p.seconds},
                                   {"epoch_seconds", p.epoch_seconds},
                                   {"group_state", p.group_state}}
                        .dump();
  return s;
}

Progress to_progress(const TrainerState& s) {
  Progress p;
  p.epoch = static_cast<int>(s.epoch);
  p.next_batch = s.step_in_epoch;
  p.global_step = s.global_step;
  if (!s.progress_json.empty()) {
    auto j = nlohmann::json::parse(s.progress_json, nullptr, false);
    if (j.is_object()) {
      p.loss_sum = j.value("loss_sum", 0.0);
      p.correct = j.value("correct", std::int64_t{0});
      p.samples = j.value("samples", std::int64_t{0});
      p.seconds = j.value("seconds", 0.0);
      p.epoch_seconds = j.value("epoch_seconds", std::vector<double>{});
      p.group_state = j.value("group_state", std::string{});
    }
  }
  return p;
}

CheckpointCallback::CheckpointCallback(std::filesystem::path path, const graph::Graph& graph,
                                       const graph::ParameterSet& params,
                                       const Optimizer& optimizer, const Trainer& trainer,
                                       std::string config_json, CheckpointInterval every)
    : path_(std::move(path)),
      graph_(graph),
      params_(params),
      optimizer_(optimizer),
      trainer_(trainer),
      config_json_(std::move(config_json)),
      every_(every) {}

CheckpointInterval parse_checkpoint_interval(const std::string& text) {
  std::int64_t number = 0;
  const char* end = text.data() + text.size();
  const auto [rest, ec] = std::from_chars(text.data(), end, number);
  const std::string unit(rest, end);
  const double seconds_per_unit = unit.empty()                   ? 0.0
                                  : unit == "s"                  ? 1.0
                                  : unit == "min" || unit == "m" ? 60.0
                                  : unit == "h"                  ? 3600.0
                                                                 : -1.0;
  if (ec != std::errc() || number < 0 || seconds_per_unit < 0.0)
    fail(
        "--checkpoint-every: '{}' is neither a number of steps nor a time; use e.g. 500 "
        "(optimizer steps), 90s, 10min or 2h (0: only at epoch ends)",
        text);
  CheckpointInterval every;
  if (unit.empty())
    every.steps = number;
  else
    every.seconds = static_cast<double>(number) * seconds_per_unit;
  return every;
}

bool parameters_finite(const graph::ParameterSet& params) {
  for (graph::ValueId id : params.ids()) {
    const Tensor& t = params.at(id);
    if (t.dtype() != DType::F32) continue;
    for (float v : t.span<float>())
      if (!std::isfinite(v)) return false;
  }
  return true;
}

void CheckpointCallback::save() {
  if (!parameters_finite(params_)) {
    if (!refused_)
      log::warn("the parameters are no longer finite at step {}: {}",
                trainer_.progress().global_step,
                written_ ? "the checkpoint is not overwritten; " + path_.string() +
                               " keeps the last finite state"
                         : std::string("no checkpoint is written"));
    refused_ = true;
    return;
  }
  save_checkpoint(path_, graph_, params_, &optimizer_,
                  to_trainer_state(trainer_.progress(), config_json_));
  written_ = true;
  since_write_.reset();
}

void CheckpointCallback::on_batch_end(const TrainState& s) {
  if (s.batch + 1 >= s.batches_per_epoch) return;  // the epoch's end writes it
  const bool step_due = every_.steps > 0 && s.global_step % every_.steps == 0;
  const bool time_due = every_.seconds > 0.0 && since_write_.seconds() >= every_.seconds;
  if (step_due || time_due) save();
}

void CheckpointCallback::on_epoch_end(const TrainState&) { save(); }

}  // namespace telar::train
