#pragma once
// DLRM runs below the command line (docs/dlrm.md): a model with the flags of
// facebookresearch/dlrm's dlrm_s_pytorch.py, trained, run for inference or benchmarked on
// random, synthetic or Criteo data, on the CPU or a simulated accelerator; and the seed
// thesis' preset sweep (--preset thesis: its workloads on its hybrid accelerator). Each writes
// a run directory, prints its tables and progress lines to `out` and returns run.json's result;
// everything that can fail on bad input fails before the run directory exists.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace telar::runs {

struct DlrmSetup {
  // The reference's flags (dlrm_s_pytorch.py), with its defaults.
  std::int64_t sparse_feature_size = 2;
  std::string embedding_size = "4-3-2", mlp_bot = "4-3-2", mlp_top = "4-2-1";
  std::string interaction_op = "dot";
  bool interaction_itself = false;
  std::string data_generation = "random", data_set = "kaggle";
  std::int64_t data_size = 1, num_batches = 0, mini_batch_size = 1, test_mini_batch_size = -1;
  std::int64_t num_indices_per_lookup = 10;
  bool num_indices_per_lookup_fixed = false, round_targets = false;
  std::string loss_function = "mse";
  double learning_rate = 0.01;
  int nepochs = 1;
  bool inference_only = false, print_time = false;
  std::int64_t print_freq = 1, test_freq = -1;
  std::uint64_t seed = 123;
  std::string raw_data_file, processed_data_file;
  // telar's.
  std::string backend = "cpu", storage = "auto", embedding_dir, out, benchmark;
  double budget_mb = 2048;
  bool strict = false, json = false, quiet = false;
  bool overwrite = false;  // replace a run already in `out` (else refused)
  // Continue the training stopped (Ctrl-C, SIGTERM) in this run directory from its checkpoint;
  // the other fields must be the run's own (the CLI takes them from run.json's "options").
  std::string resume;
  std::vector<std::string> options;  // the command-line options, kept in run.json for --resume
  double test_fraction = 0.1;
  std::int64_t test_data_size = 0;
  int warmup = 3, repeats = 20;
  // The simulated accelerator.
  std::string preset, workloads = "all";
  bool stonne_files = false;
  // Whether --backend and --embedding-storage were given (the preset has defaults of its own).
  bool backend_given = false, storage_given = false;
};

nlohmann::json run_dlrm_model(DlrmSetup setup, std::ostream& out);
nlohmann::json run_dlrm_preset(const DlrmSetup& setup, std::ostream& out);

}  // namespace telar::runs
