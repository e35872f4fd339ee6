// telar train: trains a zoo model on a data set and writes a run directory. Alone, or as a
// group of data-parallel workers (--workers): the run itself is runs/training_run; this file
// binds its options, loads the data and the model, and prints the outcome.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "cli/data_options.hpp"
#include "cli/model_options.hpp"
#include "cli/quantized_model.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/log.hpp"
#include "core/threads.hpp"
#include "graph/loss.hpp"
#include "onnx/import.hpp"
#include "prof/cpu_list.hpp"
#include "prof/event_list.hpp"
#include "prof/table_writer.hpp"
#include "prof/writers.hpp"
#include "runs/training_run.hpp"
#include "train/checkpoint.hpp"

namespace telar::cli {

namespace fs = std::filesystem;

namespace {

// The seed-002 thesis' experiment: ResNet-34 on 1x148x197 grayscale masks of 9 classes,
// softmax + MSE loss, plain SGD at 0.05, batch 128, 7650 training and 180 validation samples
// (synthetic data of that shape: the fish data set cannot be downloaded here).
constexpr const char* kPresetSeed002 = "seed002-resnet34";

// The command line as parsed: the run's setup, and the words it is given in.
struct Setup {
  runs::TrainingSetup run;
  ModelOptions model;
  DataOptions data;
  int threads = 0;
  std::string loss_name = "cross_entropy", out, resume, preset, checkpoint_every = "0", max_memory;
  std::string profile_events, profile_scopes = "run,epoch,batch,eval", profile_cpus,
                              profile_domain = "auto";
  bool profile_no_multiplex = false, no_overlap = false, no_pin = false, no_energy = false,
       json = false, overwrite = false;
  std::string powercap_root, meters = "rapl,nvml";
};

void apply_preset(CLI::App& app, Setup& s) {
  if (s.preset.empty()) return;
  require(s.preset == kPresetSeed002, "--preset {}: unknown preset; the one preset is {}", s.preset,
          kPresetSeed002);
  auto unset = [&](const char* option) { return app.count(option) == 0; };
  if (s.model.model.empty()) s.model.model = "resnet34";
  if (unset("--input")) s.model.input = "1x148x197";
  if (unset("--classes")) s.model.classes = 9;
  if (unset("--loss")) s.loss_name = "softmax_mse";
  if (unset("--batch-size")) s.run.batch_size = 128;
  if (unset("--lr")) s.run.lr = 0.05;
  if (unset("--optimizer")) s.run.optimizer.name = "sgd";
  if (unset("--data") && unset("--train-images")) s.data.data = "synthetic:7830:1x148x197:9";
  if (unset("--validation")) s.data.validation = "180";
}

// Registers every option of telar train on `app`, bound to `s`.
void add_train_options(CLI::App& app, Setup& s) {
  s.model.add_to(app);
  app.get_option("--model")->required(false);
  s.data.add_to(app);
  s.run.optimizer.momentum = 0.0f;
  app.add_option("--preset", s.preset,
                 fmt::format("{}: the seed-002 thesis' experiment (resnet34, 1x148x197, 9 "
                             "classes, softmax_mse, sgd lr 0.05, batch 128, synthetic data of "
                             "that shape); options given explicitly win",
                             kPresetSeed002));
  app.add_option("--epochs", s.run.epochs, "number of epochs")->check(at_least(1));
  app.add_option("--batch-size", s.run.batch_size,
                 "samples per batch (with --workers: the global batch, shared by the workers)");
  app.add_option("--lr", s.run.lr, "learning rate");
  app.add_option("--lr-schedule", s.run.lr_schedule,
                 "constant | step:EPOCHS:GAMMA | exp:DECAY_STEPS:RATE[:staircase]");
  app.add_option("--optimizer", s.run.optimizer.name, "sgd | adagrad | adam");
  app.add_option("--momentum", s.run.optimizer.momentum, "SGD momentum");
  app.add_flag("--nesterov", s.run.optimizer.nesterov, "SGD with Nesterov momentum");
  app.add_option("--weight-decay", s.run.optimizer.weight_decay, "L2 weight decay");
  app.add_option("--loss", s.loss_name, "cross_entropy | softmax_mse (seed-002's loss)");
  app.add_option("--backend", s.run.backend,
                 "cpu, cpu:ref, cpu:threads=N, cuda:N (docs/cuda.md)");
  app.add_option("--workers", s.run.workers,
                 "data-parallel workers: a comma-separated list of devices run as threads "
                 "(cpu:threads=1,cpu:threads=1), or mpi (one worker per MPI rank: mpirun -np N "
                 "telar train --workers mpi ...). Test knobs: DEVICE:slowdown=F, "
                 "DEVICE:fail_at_step=N (docs/dist.md)");
  app.add_option("--communicator", s.run.communicator,
                 "how the workers exchange gradients: auto (NCCL when every worker is its own "
                 "cuda:N and NCCL is built, else threads or MPI) | threads | nccl (docs/dist.md)");
  app.add_option("--balance", s.run.balance,
                 "work split between workers: equal | factor:F[@RANK] | weights:A/B/... | auto "
                 "(measured in a warm-up) | dynamic (re-measured every epoch)");
  app.add_option("--shard", s.run.shard, "interleaved (the single-worker batches, split) | contiguous "
                                     "(a block of the data per worker, as the thesis)");
  app.add_option("--bucket-mb", s.run.bucket_mb, "gradient all-reduce bucket size in MiB");
  app.add_flag("--no-overlap", s.no_overlap,
               "all-reduce after the backward pass instead of during it");
  app.add_flag("--no-pin", s.no_pin,
               "thread workers: leave their placement to the scheduler (by default each is pinned "
               "to cores of its own when their threads fit the cores this process may use)");
  app.add_option("--warmup-seconds", s.run.warmup_seconds,
                 "warm-up of --balance auto|dynamic: all workers train this long at once, in "
                 "each round (up to four, until the shares settle)")
      ->check(positive_real(true));
  app.add_option("--warmup-steps", s.run.warmup_steps, "... and at least this many steps each")
      ->check(at_least(1));
  app.add_option("--bn-buffers", s.run.bn_buffers,
                 "BatchNorm running statistics across workers: average (sample-weighted) | "
                 "broadcast (rank 0's, as DDP)");
  app.add_option("--energy-interval", s.run.energy_interval_ms,
                 "energy meter sampling interval in ms (RAPL, NVML; docs/energy.md)")
      ->check(positive_real());
  app.add_flag("--no-energy", s.no_energy, "do not measure energy");
  app.add_option("--powercap-root", s.powercap_root,
                 "RAPL powercap tree (default $TELAR_POWERCAP_ROOT or /sys/class/powercap)");
  app.add_option("--meters", s.meters, "energy meters to read: rapl, nvml or both (default rapl,nvml)");
  app.add_option("--seed", s.run.seed, "seed of initialization, data order and dropout")
      ->check(at_least(0));
  app.add_option("--out", s.out, "run directory (default: runs/train-DATE-TIME)");
  add_overwrite_flag(app, &s.overwrite);
  app.add_option("--resume", s.resume, "continue the run in this directory from its checkpoint");
  app.add_option("--limit-batches", s.run.limit_batches, "train at most N batches per epoch (0: all)")
      ->check(at_least(0));
  app.add_option("--max-memory", s.max_memory,
                 "what training may hold in memory, e.g. 8G (default: what the machine has "
                 "available); a larger estimate is refused before anything is allocated");
  app.add_option("--checkpoint-every", s.checkpoint_every,
                 "also write the checkpoint every N optimizer steps (500) or every so long "
                 "(90s, 10min, 2h), bounding what a kill can lose (0: only at epoch ends)");
  app.add_option("--profile", s.profile_events,
                 "count these events during training: an events file (one name per line) or a "
                 "comma-separated list (telar prof list); results in RUN/profile/. With thread "
                 "--workers: the whole process, in the group's steps");
  app.add_option("--profile-scopes", s.profile_scopes,
                 "scopes to record: any of run,epoch,batch,eval,node (node: each layer's "
                 "forward and backward)");
  app.add_option("--profile-cpus", s.profile_cpus,
                 "with --profile: count system-wide on these CPUs (e.g. 2-31), as the seed did");
  app.add_option("--profile-domain", s.profile_domain,
                 "with --profile: privilege domain user, kernel, all or auto");
  app.add_flag("--profile-no-multiplex", s.profile_no_multiplex,
               "with --profile: one counter group; fail if the events do not fit the PMU");
  app.add_option("--profile-colon", s.run.profile_colon,
                 "with --profile: also append the seed's `cpu:value::event` lines to this file");
  add_threads_option(app, &s.threads);
  app.add_flag("--json", s.json, "print the result as one JSON object on the last line");
  app.add_flag("--quiet", s.run.quiet, "no progress output");
}

}  // namespace

int run_train(const Args& given) {
  auto make_app = [] {
    return std::make_unique<CLI::App>("Train a model and write a run directory (run.json, metrics.csv, checkpoint, "
               "report.html); alone or data-parallel over several workers (--workers).",
               "train");
  };
  Args args = given;
  {
    auto probe = make_app();
    Setup p;
    add_train_options(*probe, p);
    int code = 0;
    if (!parse(*probe, given, "train", &code)) return code;
    if (!p.resume.empty()) {
      refuse_quantized(p.resume, "telar train --resume trains it");
      args = with_resumed_options(p.resume, given, "train");
    }
  }
  auto app_ptr = make_app();
  CLI::App& app = *app_ptr;
  Setup s;
  add_train_options(app, s);
  int code = 0;
  if (!parse(app, args, "train", &code)) return code;
  apply_preset(app, s);
  runs::TrainingSetup& r = s.run;
  if (r.quiet) log::set_level(log::Level::Quiet);
  require(!s.model.model.empty(), "--model is required (or --preset {}); see telar models",
          kPresetSeed002);
  apply_threads(s.threads);

  // Everything that can fail on bad input happens before the run directory is created.
  r.checkpoint_every = train::parse_checkpoint_interval(s.checkpoint_every);
  if (!s.max_memory.empty()) r.max_memory = parse_bytes(s.max_memory, "--max-memory");
  r.meters.powercap_root = s.powercap_root;
  energy::select_meters(r.meters, s.meters);
  r.measure_energy = !s.no_energy;
  if (!s.profile_events.empty()) {
    prof::SessionOptions& profile = r.profile.emplace();
    profile.events = prof::parse_event_argument(s.profile_events);
    profile.scopes = prof::ScopeSet::parse(s.profile_scopes, "--profile-scopes");
    profile.counting.domain = prof::parse_domain(s.profile_domain, "--profile-domain");
    profile.counting.multiplex = !s.profile_no_multiplex;
    if (!s.profile_cpus.empty()) {
      profile.counting.mode = prof::CountingMode::PerCpu;
      profile.counting.cpus = prof::parse_cpu_list(s.profile_cpus, "--profile-cpus");
      prof::check_cpus_online(profile.counting.cpus, "--profile-cpus");
    }
    if (!r.profile_colon.empty()) prof::check_output_file(r.profile_colon, "--profile-colon");
  } else {
    for (const char* o : {"--profile-scopes", "--profile-cpus", "--profile-domain",
                          "--profile-no-multiplex", "--profile-colon"})
      require(app.count(o) == 0, "{} sets up counting; it needs --profile EVENTS", o);
  }
  if (!r.workers.empty()) {
    require(app.count("--backend") == 0,
            "--workers names the devices; drop --backend (e.g. --workers "
            "cpu:threads=1,cpu:threads=1)");
  } else {
    for (const char* o : {"--communicator", "--balance", "--shard", "--bucket-mb", "--no-overlap",
                          "--no-pin", "--warmup-steps", "--warmup-seconds", "--bn-buffers"})
      require(app.count(o) == 0, "{} sets up data-parallel training; it needs --workers", o);
  }
  r.overlap = !s.no_overlap;
  r.pin = !s.no_pin;
  r.loss = graph::parse_loss(s.loss_name);
  s.data.fit_mode();  // a bad --fit is refused even where the samples need no fitting
  r.train_set = s.data.load_train(r.seed);
  r.test_set = s.data.load_test(r.seed);
  r.data_description = s.data.describe();
  r.validation = s.data.validation;
  r.model_name = s.model.model;
  const Shape feed = r.train_set.sample_shape();
  if (onnx::is_onnx_file(s.model.model)) {
    // The file's graph, fed the data's samples; its own weights unless --init random (which
    // keeps the constants of its computation).
    LoadedModel m = s.model.load(r.seed, feed);
    r.net = std::move(m.graph);
    r.initial_weights = std::move(m.weights);
    const std::int64_t outputs = r.net.value(r.net.outputs()[0]).shape.back();
    require(outputs >= r.train_set.num_classes,
            "{} has {} outputs but the data has {} classes; export it with at least {} (e.g. "
            "torchvision.models.resnet18(num_classes={}))",
            s.model.model, outputs, r.train_set.num_classes, r.train_set.num_classes,
            r.train_set.num_classes);
    r.extra_config = {{"model", fs::absolute(s.model.model).string()},
                      {"input", fmt::format("{}", fmt::join(feed, "x"))},
                      {"onnx_input", s.model.input},
                      {"init", s.model.random_weights() ? "random" : "file"},
                      {"classes", outputs},
                      {"options", options_to_keep(app)}};
  } else {
    graph::zoo::ModelOptions zoo = s.model.zoo_options();
    s.model.random_weights();  // refuses --init file
    if (!zoo.input) zoo.input = feed;
    if (!zoo.classes && s.model.model.rfind("mlp", 0) != 0) zoo.classes = r.train_set.num_classes;
    r.net = build_model(s.model.model, zoo);
    r.extra_config = {
        {"input", fmt::format("{}", fmt::join(*zoo.input, "x"))},
        {"classes", zoo.classes.value_or(r.net.value(r.net.outputs()[0]).shape.back())},
        {"options", options_to_keep(app)}};
    // A model built for another --input than the data's samples: the samples are fitted to it.
    const Shape input = sample_input(r.net);
    if (input != feed) {
      r.train_set = s.data.fitted(r.train_set, input);
      r.test_set = s.data.fitted(r.test_set, input);
      r.extra_config["fit"] = train::fit_mode_name(s.data.fit_mode());
      r.extra_config["data_input"] = fmt::format("{}", fmt::join(feed, "x"));
    }
  }
  if (!s.preset.empty()) r.extra_config["preset"] = s.preset;
  r.out = s.out;
  r.resume = s.resume;
  r.overwrite = s.overwrite;

  const auto outcome = runs::run_training(r);
  if (!outcome) return 0;  // another MPI rank: the leader reports
  const nlohmann::json& result = outcome->result;
  if (outcome->profile && !r.quiet) std::cerr << prof::format_table(*outcome->profile, {40});
  std::cout << fmt::format(
      "{}: test accuracy {:.4f} (loss {:.4f}), train accuracy {:.4f}, {:.1f} s training "
      "({:.0f} samples/s)\nrun directory: {} (report.html, metrics.csv, {})\n",
      r.model_name, result["test"]["accuracy"].get<double>(),
      result["test"]["loss"].get<double>(), result["train"]["accuracy"].get<double>(),
      result["train_seconds"].get<double>(), result["samples_per_s"].get<double>(),
      outcome->run_dir.string(), train::kCheckpointFileName);
  if (outcome->energy && outcome->energy->measured) std::cout << outcome->energy->format();
  if (s.json) print_json(result);
  return 0;
}

}  // namespace telar::cli
