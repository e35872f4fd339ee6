#include "train/callbacks/checkpoint_callback.hpp"

#include <nlohmann/json.hpp>

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
                                       std::string config_json, std::int64_t every_steps)
    : path_(std::move(path)),
      graph_(graph),
      params_(params),
      optimizer_(optimizer),
      trainer_(trainer),
      config_json_(std::move(config_json)),
      every_steps_(every_steps) {}

void CheckpointCallback::save() {
  save_checkpoint(path_, graph_, params_, &optimizer_,
                  to_trainer_state(trainer_.progress(), config_json_));
  written_ = true;
}

void CheckpointCallback::on_batch_end(const TrainState& s) {
  if (every_steps_ > 0 && s.global_step % every_steps_ == 0 && s.batch + 1 < s.batches_per_epoch)
    save();
}

void CheckpointCallback::on_epoch_end(const TrainState&) { save(); }

}  // namespace telar::train
