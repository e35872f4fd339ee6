// telar dlrm: DLRM with dlrm_s_pytorch.py's flags — training and inference on random,
// synthetic or Criteo data, benchmarks — and the seed thesis' preset, writing a run directory.
// The runs themselves are runs/dlrm_run; this file binds the flags.
#include <fmt/format.h>

#include <iostream>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/threads.hpp"
#include "runs/dlrm_run.hpp"

namespace telar::cli {

namespace {

void add_flags(CLI::App& app, runs::DlrmSetup& f, int* threads) {
  app.add_option("--arch-sparse-feature-size", f.sparse_feature_size,
                 "embedding width d (must equal the last --arch-mlp-bot width)");
  app.add_option("--arch-embedding-size", f.embedding_size,
                 "rows of each table, dash separated (e.g. 1000000-1000000-1000000)");
  app.add_option("--arch-mlp-bot", f.mlp_bot,
                 "bottom MLP: dense input width, then layer widths (e.g. 13-512-256-64-32)");
  app.add_option("--arch-mlp-top", f.mlp_top,
                 "top MLP layer widths ending in 1; DLRM prepends the interaction width");
  app.add_option("--arch-interaction-op", f.interaction_op, "dot | cat");
  app.add_flag("--arch-interaction-itself", f.interaction_itself,
               "dot interaction keeps the diagonal (self pairs)");
  app.add_option("--data-generation", f.data_generation,
                 "random (the reference generator) | synthetic (clicks with a hidden rule) | "
                 "dataset (Criteo)");
  app.add_option("--data-set", f.data_set, "kaggle | terabyte (same text format)");
  app.add_option("--data-size", f.data_size, "samples (random, synthetic)");
  app.add_option("--num-batches", f.num_batches, "batches per epoch (0: from --data-size / data)");
  app.add_option("--mini-batch-size", f.mini_batch_size, "samples per batch");
  app.add_option("--test-mini-batch-size", f.test_mini_batch_size,
                 "samples per test batch (default: --mini-batch-size)");
  app.add_option("--num-indices-per-lookup", f.num_indices_per_lookup,
                 "indices per bag: at most this many (random in [1, N]) or exactly with -fixed");
  app.add_flag("--num-indices-per-lookup-fixed", f.num_indices_per_lookup_fixed,
               "every bag gets exactly --num-indices-per-lookup indices (before duplicates are "
               "removed); also --num-indices-per-lookup-fixed=true|false");
  app.add_flag("--round-targets", f.round_targets, "random targets rounded to 0/1");
  app.add_option("--loss-function", f.loss_function, "mse | bce");
  app.add_option("--learning-rate", f.learning_rate, "SGD learning rate");
  app.add_option("--nepochs", f.nepochs, "epochs");
  app.add_flag("--inference-only", f.inference_only, "forward passes only, no training");
  app.add_option("--print-freq", f.print_freq, "report loss and accuracy every N batches");
  app.add_option("--test-freq", f.test_freq,
                 "also test every N batches (a test set exists for synthetic and dataset data; "
                 "it is always tested at the end of each epoch)");
  app.add_flag("--print-time", f.print_time, "accepted for compatibility (times are always shown)");
  app.add_option("--numpy-rand-seed", f.seed, "seed of initialisation and generated data");
  app.add_option("--raw-data-file", f.raw_data_file, "Criteo text (train.txt, day_N)");
  app.add_option("--processed-data-file", f.processed_data_file,
                 "the binary cache of the Criteo text (default: RAW.telar-cache)");
  app.add_option("--backend", f.backend,
                 "cpu | cpu:threads=N | cpu:ref | sim:CONFIG.cfg | sim:HYBRID.toml (the "
                 "simulated accelerator: MLPs on the dense engine, EmbeddingBags on the sparse "
                 "one, e.g. sim:configs/hybrid_dlrm.toml; values from the CPU)");
  app.add_option("--preset", f.preset,
                 "thesis: the thesis' 13 workloads (validation, groups 1-3) on its hybrid "
                 "accelerator (Table 11), inference, one summary table and one report");
  app.add_option("--workloads", f.workloads,
                 "with --preset: all, or names separated by commas (DLRM(1), 50-10M-80-1000, "
                 "validation, group1...)");
  app.add_flag("--stonne-files", f.stonne_files,
               "sim: write STONNE's stats (.txt) and .counters files per simulator call into "
               "RUN/stonne");
  app.add_option("--embedding-storage", f.storage,
                 "auto | memory | mmap | procedural (auto: memory within --embedding-budget-mb, "
                 "else procedural)");
  app.add_option("--embedding-budget-mb", f.budget_mb, "auto storage: memory up to this size");
  app.add_option("--embedding-dir", f.embedding_dir, "mmap storage: directory of the table files");
  app.add_flag("--strict", f.strict, "malformed Criteo lines are errors (default: skipped)");
  app.add_option("--test-fraction", f.test_fraction,
                 "dataset: the last fraction of the records is the test set");
  app.add_option("--test-data-size", f.test_data_size,
                 "synthetic: test samples (default: a quarter of --data-size)");
  app.add_option("--benchmark", f.benchmark,
                 "inference | embedding-bag: time the model's forward (samples/s) or table 0's "
                 "EmbeddingBag alone (effective GB/s) on random inputs");
  app.add_option("--warmup", f.warmup, "benchmark: untimed calls first");
  app.add_option("--repeats", f.repeats, "benchmark: timed calls");
  app.add_option("--out", f.out, "run directory (default: runs/dlrm-DATE-TIME)");
  add_overwrite_flag(app, &f.overwrite);
  app.add_option("--resume", f.resume,
                 "continue the training that Ctrl-C or SIGTERM stopped in this run directory, "
                 "from its checkpoint, with the options it was started with");
  add_threads_option(app, threads);
  app.add_flag("--json", f.json, "print the result as one JSON object on the last line");
  app.add_flag("--quiet", f.quiet, "no per-batch lines");
}

// The preset sets the model and the data; flags that would change them are refused.
void check_preset_flags(const CLI::App& app, const runs::DlrmSetup& f) {
  require(f.preset == "thesis", "--preset: '{}' is not a preset; use thesis", f.preset);
  require(f.resume.empty(), "--resume continues a training; the preset is inference only");
  for (const char* flag :
       {"--arch-sparse-feature-size", "--arch-embedding-size", "--arch-mlp-bot", "--arch-mlp-top",
        "--arch-interaction-op", "--arch-interaction-itself", "--data-generation", "--data-size",
        "--num-batches", "--mini-batch-size", "--num-indices-per-lookup",
        "--num-indices-per-lookup-fixed", "--raw-data-file", "--processed-data-file", "--benchmark",
        "--nepochs", "--loss-function", "--learning-rate", "--test-freq"})
    require(app.count(flag) == 0,
            "{} cannot be combined with --preset {} (the preset sets the model and the data; "
            "run without --preset to choose them)",
            flag, f.preset);
}

}  // namespace

int run_dlrm(const Args& given) {
  auto make_app = [] {
    return std::make_unique<CLI::App>(
        "DLRM (Naumov et al.) with the flags of facebookresearch/dlrm's dlrm_s_pytorch.py: "
        "training and inference on random, synthetic or Criteo data, benchmarks, and the "
        "simulated hybrid accelerator of the seed thesis (--backend sim:..., --preset thesis). "
        "Without arguments: the thesis' workload DLRM(1) on that accelerator, per component. "
        "Writes a run directory (run.json, metrics.csv or components.csv, report.html).",
        "dlrm");
  };
  Args args = given;
  {
    auto probe = make_app();
    runs::DlrmSetup p;
    int ignored = 0;
    add_flags(*probe, p, &ignored);
    int code = 0;
    if (!parse(*probe, given, "dlrm", &code)) return code;
    if (!p.resume.empty()) args = with_resumed_options(p.resume, given, "dlrm");
  }
  auto app_ptr = make_app();
  CLI::App& app = *app_ptr;
  runs::DlrmSetup f;
  int threads = 0;
  add_flags(app, f, &threads);
  int code = 0;
  if (!parse(app, args, "dlrm", &code)) return code;
  f.options = options_to_keep(app);
  if (f.quiet) log::set_level(log::Level::Quiet);
  apply_threads(threads);
  // No arguments (other than where and how to write): the thesis' validation workload DLRM(1)
  // on its hybrid accelerator.
  bool bare = true;
  for (const CLI::Option* o : app.get_options())
    if (o->count() > 0 && !o->check_name("--out") && !o->check_name("--json") &&
        !o->check_name("--quiet") && !o->check_name("--threads") &&
        !o->check_name("--stonne-files"))
      bare = false;
  if (bare) {
    f.preset = "thesis";
    f.workloads = "DLRM(1)";
    log::info(
        "no arguments: the thesis' validation workload DLRM(1) on its hybrid accelerator (as "
        "telar dlrm --preset thesis --workloads 'DLRM(1)'; telar dlrm --help for the flags)");
  }
  f.backend_given = app.count("--backend") > 0;
  f.storage_given = app.count("--embedding-storage") > 0;
  require(!f.preset.empty() || app.count("--workloads") == 0, "--workloads needs --preset thesis");
  if (!f.preset.empty()) check_preset_flags(app, f);
  const nlohmann::json result =
      f.preset.empty() ? runs::run_dlrm_model(f, std::cout) : runs::run_dlrm_preset(f, std::cout);
  if (f.json) print_json(result);
  return 0;
}

}  // namespace telar::cli
