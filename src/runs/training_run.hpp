#pragma once
// A training run below the command line: a model trained on a data set and written to a run
// directory (run.json, metrics.csv, checkpoint, report.html, energy.csv, profile/), alone or
// as a group of data-parallel workers: threads of this process (pinned to cores of their own),
// one GPU each joined by NCCL, or one MPI rank each (docs/train.md, docs/dist.md).
// run_training() checks everything that can fail on bad input before it writes anything.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "dist/energy/meter.hpp"
#include "dist/energy/sampler.hpp"
#include "graph/graph.hpp"
#include "graph/loss.hpp"
#include "prof/profile.hpp"
#include "prof/session.hpp"
#include "train/callbacks/checkpoint_callback.hpp"
#include "train/data/dataset.hpp"
#include "train/optim/optimizer.hpp"

namespace telar::runs {

struct TrainingSetup {
  // What: the model (without a loss), its name for messages, the loss, the data.
  std::string model_name;
  graph::Graph net;
  // The weights to start from (an ONNX file's); none: initialised from `seed`.
  std::optional<graph::ParameterSet> initial_weights;
  graph::LossKind loss = graph::LossKind::CrossEntropy;
  train::Dataset train_set, test_set;
  std::string data_description;
  std::string validation;  // "" none, "0.1" a fraction of the training set, "5000" a count

  // How (telar train's flags of the same names).
  int epochs = 1;
  std::int64_t batch_size = 128, limit_batches = 0;
  // What training may hold in memory (bytes), checked against an estimate before anything is
  // allocated; 0: what the machine has available.
  std::int64_t max_memory = 0;
  train::CheckpointInterval checkpoint_every;
  double lr = 0.05;
  std::string lr_schedule = "constant";
  train::OptimizerOptions optimizer;
  std::uint64_t seed = 0;
  std::string backend = "cpu";

  // Data parallelism: empty `workers` trains alone on `backend`.
  std::string workers, communicator = "auto", balance = "equal", shard = "interleaved",
                       bn_buffers = "average";
  double bucket_mb = 4.0;
  bool overlap = true, pin = true;
  int warmup_steps = 3;
  double warmup_seconds = 1.0;

  // Energy and counters.
  bool measure_energy = true;
  double energy_interval_ms = 500.0;
  energy::MeterOptions meters;
  std::optional<prof::SessionOptions> profile;  // --profile
  std::string profile_colon;                    // also append the seed's colon lines here

  // Where: the run directory ("" a new one under runs/), or the run to continue; a run already
  // in `out` is refused unless `overwrite` (then replaced).
  std::filesystem::path out, resume;
  bool overwrite = false;
  // Merged into run.json's config (the caller's words for the model's input and classes, the
  // options to resume with).
  nlohmann::json extra_config = nlohmann::json::object();
  bool quiet = false;
};

struct TrainingOutcome {
  nlohmann::json result;  // run.json's result
  std::filesystem::path run_dir;
  std::optional<energy::EnergySummary> energy;
  std::optional<prof::Profile> profile;
};

// The leader's outcome; std::nullopt on the other MPI ranks. Throws telar::Error naming the
// option for bad input (nothing written then), train::NonFiniteLoss when the loss diverges.
std::optional<TrainingOutcome> run_training(const TrainingSetup& setup);

}  // namespace telar::runs
