#include "runs/dlrm_checkpoint.hpp"

#include <map>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "dlrm/model.hpp"
#include "train/checkpoint.hpp"

namespace telar::runs {

namespace {

std::string rows_name(std::int64_t t) {
  return dlrm::table_node_name(t) + ".rows";
}
std::string values_name(std::int64_t t) {
  return dlrm::table_node_name(t) + ".values";
}

nlohmann::json position_json(const dlrm::RunPosition& at) {
  return {{"epoch_loss", at.epoch_loss},
          {"epoch_correct", at.epoch_correct},
          {"epoch_samples", at.epoch_samples},
          {"interval_loss", at.interval_loss},
          {"interval_seconds", at.interval_seconds},
          {"interval_correct", at.interval_correct},
          {"interval_samples", at.interval_samples},
          {"interval_batches", at.interval_batches},
          {"samples", at.samples},
          {"compute_seconds", at.compute_seconds},
          {"best_test_accuracy", at.best_test_accuracy}};
}

dlrm::RunPosition position_from(const train::TrainerState& t, const std::filesystem::path& path) {
  const auto j = nlohmann::json::parse(t.progress_json, nullptr, false);
  require(j.is_object() && j.contains("epoch_loss"),
          "checkpoint '{}' holds no DLRM run position; resume it with the command that wrote it",
          path.string());
  dlrm::RunPosition at;
  at.epoch = static_cast<int>(t.epoch);
  at.next_batch = t.step_in_epoch;
  at.batches = t.global_step;
  try {
    at.epoch_loss = j.at("epoch_loss").get<double>();
    at.epoch_correct = j.at("epoch_correct").get<std::int64_t>();
    at.epoch_samples = j.at("epoch_samples").get<std::int64_t>();
    at.interval_loss = j.at("interval_loss").get<double>();
    at.interval_seconds = j.at("interval_seconds").get<double>();
    at.interval_correct = j.at("interval_correct").get<std::int64_t>();
    at.interval_samples = j.at("interval_samples").get<std::int64_t>();
    at.interval_batches = j.at("interval_batches").get<std::int64_t>();
    at.samples = j.at("samples").get<std::int64_t>();
    at.compute_seconds = j.at("compute_seconds").get<double>();
    at.best_test_accuracy = j.at("best_test_accuracy").get<double>();
  } catch (const nlohmann::json::exception& e) {
    fail("checkpoint '{}': its DLRM run position is damaged ({}); start a new run", path.string(),
         e.what());
  }
  return at;
}

}  // namespace

void save_dlrm_checkpoint(const std::filesystem::path& path, const dlrm::DlrmModel& model,
                          dlrm::Executor& exe, const dlrm::RunPosition& at) {
  train::TrainerState state;
  state.epoch = at.epoch;
  state.step_in_epoch = at.next_batch;
  state.global_step = at.batches;
  state.progress_json = position_json(at).dump();
  train::Checkpoint c =
      train::capture_checkpoint(exe.training_graph(), exe.parameters(), nullptr, state);
  for (std::int64_t t = 0; t < model.tables.size(); ++t) {
    dlrm::EmbeddingTable::TrainedRows rows = model.tables[t].trained_rows();
    if (rows.rows.defined()) c.extra.push_back({rows_name(t), std::move(rows.rows)});
    c.extra.push_back({values_name(t), std::move(rows.values)});
  }
  train::write_checkpoint(path, c);
}

dlrm::RunPosition load_dlrm_checkpoint(const std::filesystem::path& path, dlrm::DlrmModel& model,
                                       dlrm::Executor& exe) {
  const train::Checkpoint c = train::read_checkpoint(path);
  std::map<std::string, const Tensor*> extra;
  for (const auto& [name, tensor] : c.extra) extra.emplace(name, &tensor);
  for (std::int64_t t = 0; t < model.tables.size(); ++t)
    require(extra.contains(values_name(t)),
            "checkpoint '{}' has no embedding table {}; it is not this DLRM's (resume with the "
            "run's own options)",
            path.string(), t);
  require(extra.size() <= static_cast<std::size_t>(2 * model.tables.size()) &&
              !extra.contains(values_name(model.tables.size())),
          "checkpoint '{}' holds more embedding tables than this DLRM's {}; resume with the "
          "run's own options",
          path.string(), model.tables.size());
  // The MLPs first: restore_checkpoint checks the whole graph before it writes anything.
  const train::TrainerState state = train::restore_checkpoint(
      c, path, exe.training_graph(), exe.parameters(), nullptr, {true, false});
  exe.parameters_changed();
  const std::string source = "checkpoint '" + path.string() + "'";
  for (std::int64_t t = 0; t < model.tables.size(); ++t) {
    dlrm::EmbeddingTable::TrainedRows rows;
    if (auto it = extra.find(rows_name(t)); it != extra.end()) rows.rows = *it->second;
    rows.values = *extra.at(values_name(t));
    model.tables[t].restore_rows(rows, source);
  }
  return position_from(state, path);
}

}  // namespace telar::runs
