// telar train: trains a zoo model on a data set and writes a run directory. Alone, or as a
// group of data-parallel workers (--workers): threads of this process, or one MPI rank each.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include "backend/backend.hpp"
#include "cli/data_options.hpp"
#include "cli/model_options.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/log.hpp"
#include "core/threads.hpp"
#include "dist/communicator_choice.hpp"
#include "dist/data_parallel.hpp"
#include "dist/energy/sampler.hpp"
#include "dist/mpi_communicator.hpp"
#include "dist/nccl_communicator.hpp"
#include "dist/pinning.hpp"
#include "dist/worker_threads.hpp"
#include "graph/loss.hpp"
#include "graph/parameters.hpp"
#include "prof/cpu_list.hpp"
#include "prof/event_list.hpp"
#include "prof/html_report.hpp"
#include "prof/table_writer.hpp"
#include "prof/writers.hpp"
#include "report/run_dir.hpp"
#include "report/training_recorder.hpp"
#include "train/callbacks/checkpoint_callback.hpp"
#include "train/callbacks/profile_callback.hpp"
#include "train/callbacks/progress_callback.hpp"
#include "train/checkpoint.hpp"
#include "train/data/data_loader.hpp"
#include "train/data/split.hpp"
#include "train/trainer.hpp"

namespace telar::cli {

namespace fs = std::filesystem;

namespace {

nlohmann::json metrics_json(const train::PhaseMetrics& m) {
  return {{"loss", m.loss}, {"accuracy", m.accuracy}, {"samples", m.samples}};
}

// The seed-002 thesis' experiment: ResNet-34 on 1x148x197 grayscale masks of 9 classes,
// softmax + MSE loss, plain SGD at 0.05, batch 128, 7650 training and 180 validation samples
// (synthetic data of that shape: the fish data set cannot be downloaded here).
constexpr const char* kPresetSeed002 = "seed002-resnet34";

// Everything parsed and loaded from the command line: the same on every worker.
struct Setup {
  ModelOptions model;
  DataOptions data;
  int epochs = 1, threads = 0;
  std::int64_t batch_size = 128, limit_batches = 0, checkpoint_every = 0;
  double lr = 0.05;
  std::string schedule = "constant", loss_name = "cross_entropy", backend_name = "cpu", out,
              resume, profile_events, profile_scopes = "run,epoch,batch,eval", preset;
  // Counting options of --profile (as telar prof run's --cpus, --domain, --no-multiplex, --colon).
  std::string profile_cpus, profile_domain = "auto", profile_colon;
  bool profile_no_multiplex = false;
  prof::SessionOptions profile;  // resolved from the above
  train::OptimizerOptions opt;
  std::uint64_t seed = 0;
  bool json = false, quiet = false;
  // Data parallelism.
  std::string communicator = "auto", communicator_kind;  // --communicator, and the chosen kind
  std::string workers, balance = "equal", shard = "interleaved", bn_buffers = "average";
  double bucket_mb = 4.0;
  bool no_overlap = false, no_pin = false;
  int warmup_steps = 3;
  double warmup_seconds = 1.0;
  // Energy.
  bool no_energy = false;
  double energy_interval_ms = 500.0;
  std::string powercap_root, meters = "rapl,nvml";
  energy::MeterOptions meter_options;  // resolved from powercap_root and meters

  // Resolved.
  train::Dataset train_set, test_set;
  graph::zoo::ModelOptions zoo;
  graph::Graph net, g;
  graph::LossKind loss_kind = graph::LossKind::CrossEntropy;
  std::vector<std::int64_t> train_idx, val_idx, test_idx;
  dist::WorkerList worker_list;
  std::vector<dist::WorkerSpec> thread_workers;  // thread workers, their compute threads made explicit
  std::vector<std::vector<int>> worker_cpus;     // the cores each thread worker is pinned to (or none)
  dist::DataParallelOptions dp;
  nlohmann::json config;
  fs::path run_path;
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
  if (unset("--batch-size")) s.batch_size = 128;
  if (unset("--lr")) s.lr = 0.05;
  if (unset("--optimizer")) s.opt.name = "sgd";
  if (unset("--data") && unset("--train-images")) s.data.data = "synthetic:7830:1x148x197:9";
  if (unset("--validation")) s.data.validation = "180";
}

// The part of one worker (or of the lone trainer: comm == nullptr). Returns on the leader
// with the result printed and run.json written. `profiler` (--profile) is opened by the
// caller, before any worker thread starts; the leader's hooks drive its scopes.
void train_replica(const Setup& s, dist::Communicator* comm, const dist::WorkerSpec* spec,
                   prof::TrainingProfiler* profiler) {
  const bool leader = comm == nullptr || comm->rank() == 0;
  graph::ParameterSet params = graph::ParameterSet::initialize(s.g, s.seed);
  auto optimizer = train::make_optimizer(s.opt);
  auto lr_schedule = train::LrSchedule::parse(s.schedule, s.lr);

  train::Progress start;
  if (!s.resume.empty()) {
    start = train::to_progress(
        train::load_checkpoint(s.run_path / train::kCheckpointFileName, s.g, params, optimizer.get()));
    if (start.epoch >= s.epochs)
      fail("--resume {}: the run already finished {} epochs; raise --epochs to train more", s.resume,
           start.epoch);
    if (leader)
      log::info("resuming {} at epoch {} batch {} (step {})", s.resume, start.epoch + 1,
                start.next_batch, start.global_step);
  }

  std::unique_ptr<train::ProfileCallback> profile_callback;
  if (profiler && leader)
    profile_callback = std::make_unique<train::ProfileCallback>(
        *profiler, s.profile.scopes.contains(prof::ScopeKind::Node));

  // The executable and the batch sources: the lone trainer's own, or the worker's shares.
  std::unique_ptr<backend::Executable> solo_exe;
  std::unique_ptr<train::DataLoader> solo_train, solo_val, solo_test;
  std::unique_ptr<dist::DataParallelWorker> worker;
  backend::Executable* exe = nullptr;
  train::BatchSource *train_source = nullptr, *val_source = nullptr, *test_source = nullptr;
  if (comm) {
    worker = std::make_unique<dist::DataParallelWorker>(*comm, *spec, s.g, params, s.dp, s.seed);
    exe = &worker->executable();
    train_source = &worker->set_train_data(s.train_set, s.train_idx, s.batch_size, s.seed);
    test_source = &worker->add_eval_data(s.test_set, s.test_idx, s.batch_size);
    if (!s.val_idx.empty()) val_source = &worker->add_eval_data(s.train_set, s.val_idx, s.batch_size);
  } else {
    solo_exe = backend::compile(backend::parse_backend_spec(s.backend_name), s.g, params, {s.seed});
    exe = solo_exe.get();
    solo_train = std::make_unique<train::DataLoader>(
        s.train_set, s.train_idx, train::LoaderOptions{s.batch_size, true, false, s.seed});
    solo_test = std::make_unique<train::DataLoader>(
        s.test_set, train::LoaderOptions{s.batch_size, false, false, s.seed});
    train_source = solo_train.get();
    test_source = solo_test.get();
    if (!s.val_idx.empty()) {
      solo_val = std::make_unique<train::DataLoader>(
          s.train_set, s.val_idx, train::LoaderOptions{s.batch_size, false, false, s.seed});
      val_source = solo_val.get();
    }
  }

  train::Trainer trainer(*exe, params, *optimizer, lr_schedule, {s.epochs, s.limit_batches});
  trainer.set_progress(start);
  if (worker) trainer.set_group(worker.get());

  // Only the leader writes: the run directory, the metrics, the checkpoint, the progress.
  std::unique_ptr<report::RunDirectory> run;
  std::unique_ptr<train::ProgressCallback> progress;
  std::unique_ptr<report::TrainingRecorder> recorder;
  std::unique_ptr<train::CheckpointCallback> checkpointer;
  nlohmann::json config = s.config;
  if (leader) {
    run = std::make_unique<report::RunDirectory>(s.run_path);
    const std::string device =
        worker ? fmt::format("{} workers ({}): {}; balance {}", comm->size(), comm->kind(),
                             s.workers, s.balance)
               : exe->name() + fmt::format(", {} threads", compute_threads());
    progress = std::make_unique<train::ProgressCallback>();
    recorder = std::make_unique<report::TrainingRecorder>(
        *run, fmt::format("telar train: {}", s.model.model),
        std::vector<std::pair<std::string, std::string>>{
            {"model", fmt::format("{} ({} parameters)", s.model.model, s.net.parameter_count())},
            {"data", s.data.describe()},
            {"optimizer", optimizer->describe()},
            {"batch size", std::to_string(s.batch_size) + (worker ? " (global)" : "")},
            {"epochs", std::to_string(s.epochs)},
            {"backend", device}},
        s.resume.empty() ? -1 : start.epoch);
    checkpointer = std::make_unique<train::CheckpointCallback>(
        run->file(train::kCheckpointFileName), s.g, params, *optimizer, trainer, config.dump(),
        s.checkpoint_every);
    trainer.add_callback(progress.get());
    trainer.add_callback(recorder.get());
    trainer.add_callback(checkpointer.get());
    if (profile_callback) trainer.add_callback(profile_callback.get());
    run->write_run_json("train", config, {{"status", "running"}});
    log::info("training {} ({} parameters) on {} ({} samples), {} epochs, batch {}, {} on {}",
              s.model.model, s.net.parameter_count(), s.data.describe(), s.train_idx.size(),
              s.epochs, s.batch_size, optimizer->describe(), device);
  }

  // Energy of the devices over the training loop and the final evaluation (start-up and the
  // warm-up excluded, as the thesis did); on the leader, for its machine.
  std::unique_ptr<energy::EnergySampler> sampler;
  if (leader && !s.no_energy) {
    sampler = energy::make_sampler(s.energy_interval_ms / 1000.0, s.meter_options);
    std::set<int> gpus;
    auto note_gpu = [&](const backend::BackendSpec& d) {
      if (d.kind == "cuda") gpus.insert(d.target.empty() ? 0 : std::atoi(d.target.c_str()));
    };
    if (!comm) note_gpu(backend::parse_backend_spec(s.backend_name));
    for (const auto& w : s.worker_list.workers) note_gpu(w.device);
    sampler->set_used_gpus(gpus);
  }

  train::PhaseMetrics test, validation;
  Stopwatch loop_clock;
  double loop_seconds = 0.0;
  auto body = [&] {
    if (worker) worker->start(start.group_state);
    if (sampler) sampler->start();
    loop_clock.reset();
    try {
      trainer.fit(*train_source, val_source ? val_source : test_source);
      loop_seconds = loop_clock.seconds();
      if (val_source) {
        validation = trainer.state().eval;  // the last epoch's; evaluate() replaces it
        test = trainer.evaluate(*test_source);
      } else {
        test = trainer.state().eval;
      }
    } catch (const train::NonFiniteLoss& e) {
      // Every worker meets it at the same step; each stops by itself.
      if (run) run->write_run_json("train", config, {{"status", "stopped: non-finite loss"}});
      throw train::NonFiniteLoss(
          fmt::format("{}; {}", e.what(),
                      checkpointer && checkpointer->written()
                          ? fmt::format("the last good checkpoint is {}", checkpointer->path().string())
                          : std::string("no checkpoint was written before it")),
          e.epoch, e.batch, e.step);
    }
  };
  try {
    if (worker)
      worker->guard(body);
    else
      body();
  } catch (const train::NonFiniteLoss&) {
    throw;  // run.json says so already
  } catch (const std::exception& e) {
    if (run) run->write_run_json("train", config, {{"status", fmt::format("failed: {}", e.what())}});
    throw;
  }
  const double total_seconds = loop_clock.seconds();
  if (!leader) return;
  std::optional<energy::EnergySummary> energy_summary;
  if (sampler) {
    energy_summary = sampler->stop();
    if (energy_summary->measured) sampler->write_csv(run->file("energy.csv"));
  }

  if (profiler) {
    const prof::Profile profile = profiler->finish();
    ensure_writable_dir(run->file("profile"));
    prof::write_profile_files(
        profile, run->file("profile"),
        worker ? fmt::format("telar train --profile: {}, {} workers (the whole process)",
                             s.model.model, comm->size())
               : fmt::format("telar train --profile: {}", s.model.model));
    if (!s.profile_colon.empty()) prof::append_colon_file(profile, s.profile_colon);
    if (!s.quiet) std::cerr << prof::format_table(profile, {40});
  }
  const auto& p = trainer.progress();
  double train_seconds = 0.0;
  for (double sec : p.epoch_seconds) train_seconds += sec;
  // Global batches: every sample of the epoch once, the last batch possibly smaller.
  const std::int64_t n = static_cast<std::int64_t>(s.train_idx.size());
  const std::int64_t steps = (n + s.batch_size - 1) / s.batch_size;
  const std::int64_t per_epoch = s.limit_batches > 0 ? std::min(s.limit_batches, steps) : steps;
  std::int64_t samples_per_epoch = 0;
  for (std::int64_t i = 0; i < per_epoch; ++i) samples_per_epoch += std::min(s.batch_size, n - i * s.batch_size);
  const std::int64_t samples_total = samples_per_epoch * static_cast<std::int64_t>(p.epoch_seconds.size());
  const double samples_per_s =
      train_seconds > 0 ? static_cast<double>(samples_total) / train_seconds : 0.0;
  // Each epoch's own figure: the first epoch also makes the kernels' plans and touches fresh
  // memory, so a later epoch's is the steady-state throughput.
  std::vector<double> epoch_samples_per_s;
  for (double sec : p.epoch_seconds)
    epoch_samples_per_s.push_back(sec > 0 ? static_cast<double>(samples_per_epoch) / sec : 0.0);
  nlohmann::json result = {{"train", metrics_json(trainer.state().train)},
                           {"test", metrics_json(test)},
                           {"samples_per_s", samples_per_s},
                           {"epoch_samples_per_s", epoch_samples_per_s},
                           {"epoch_seconds", p.epoch_seconds},
                           {"train_seconds", train_seconds},
                           {"loop_seconds", loop_seconds},
                           {"total_seconds", total_seconds},
                           {"run_dir", run->path().string()}};
  if (val_source) result["validation"] = metrics_json(validation);
  if (worker) result["data_parallel"] = worker->describe();
  if (energy_summary) result["energy"] = energy_summary->to_json();
  run->write_run_json("train", config, {{"status", "finished"}, {"result", result}});
  std::cout << fmt::format(
      "{}: test accuracy {:.4f} (loss {:.4f}), train accuracy {:.4f}, {:.1f} s training "
      "({:.0f} samples/s)\nrun directory: {} (report.html, metrics.csv, {})\n",
      s.model.model, test.accuracy, test.loss, trainer.state().train.accuracy, train_seconds,
      samples_per_s, run->path().string(), train::kCheckpointFileName);
  if (energy_summary && energy_summary->measured) std::cout << energy_summary->format();
  if (s.json) print_json(result);
}

// Pins the calling worker thread to its cores (when the workers were given cores); the threads
// it starts inherit them.
void pin_worker(const Setup& s, int rank) {
  if (s.worker_cpus.empty()) return;
  const auto& cpus = s.worker_cpus[static_cast<std::size_t>(rank)];
  if (!dist::pin_this_thread(cpus))
    log::warn("worker {}: could not pin it to cores {}; it runs where the scheduler puts it", rank,
              fmt::join(cpus, ","));
}

// The group's workers as threads of this process: each builds its replica; the first
// failure ends them all and is reported naming the worker.
void train_threads(const Setup& s, prof::TrainingProfiler* profiler) {
  if (!s.worker_cpus.empty()) {
    std::vector<std::string> where;
    for (std::size_t r = 0; r < s.worker_cpus.size(); ++r)
      where.push_back(fmt::format("worker {} on CPU {}", r, fmt::join(s.worker_cpus[r], ",")));
    log::info("pinned {} (--no-pin leaves them to the scheduler)", fmt::join(where, ", "));
  }
  dist::run_worker_threads(static_cast<int>(s.thread_workers.size()), [&](dist::Communicator& comm) {
    pin_worker(s, comm.rank());
    const dist::WorkerSpec& spec = s.thread_workers[static_cast<std::size_t>(comm.rank())];
    dist::run_guarded(comm, dist::member_name(comm, spec.text),
                      [&] { train_replica(s, &comm, &spec, profiler); });
  });
}

// The group's workers as threads of this process, each on its own GPU, joined by NCCL.
void train_nccl(const Setup& s, prof::TrainingProfiler* profiler) {
  std::vector<int> devices;
  for (const auto& w : s.worker_list.workers) devices.push_back(dist::cuda_device_index(w.device));
  const auto members = dist::make_nccl_group(devices);
  dist::run_worker_threads(members, [&](dist::Communicator& comm) {
    pin_worker(s, comm.rank());
    const dist::WorkerSpec& spec = s.thread_workers[static_cast<std::size_t>(comm.rank())];
    dist::run_guarded(comm, dist::member_name(comm, spec.text),
                      [&] { train_replica(s, &comm, &spec, profiler); });
  });
}

// One worker per MPI rank (mpirun -np N telar train --workers mpi ...).
void train_mpi(const Setup& s) {
  auto comm = dist::open_mpi_world();
  if (comm->rank() != 0) log::set_level(log::Level::Quiet);
  if (comm->size() == 1)
    log::warn("--workers mpi: this is the only MPI rank; start N workers with "
              "mpirun -np N telar train --workers mpi ...");
  dist::WorkerSpec spec = s.worker_list.for_rank(comm->rank(), comm->size());
  // The ranks on this machine share its cores; each assumes the others are devices like its own.
  int local_ranks = 1;
  if (const char* v = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE")) local_ranks = std::max(1, std::atoi(v));
  std::vector<dist::WorkerSpec> local(static_cast<std::size_t>(local_ranks), spec);
  dist::assign_threads(local);
  spec = local[0];
  dist::run_guarded(*comm, dist::member_name(*comm, spec.text),
                    [&] { train_replica(s, comm.get(), &spec, nullptr); });
}

// Registers every option of telar train on `app`, bound to `s`.
void add_train_options(CLI::App& app, Setup& s) {
  s.model.add_to(app);
  app.get_option("--model")->required(false);
  s.data.add_to(app);
  s.opt.momentum = 0.0f;
  app.add_option("--preset", s.preset,
                 fmt::format("{}: the seed-002 thesis' experiment (resnet34, 1x148x197, 9 "
                             "classes, softmax_mse, sgd lr 0.05, batch 128, synthetic data of "
                             "that shape); options given explicitly win",
                             kPresetSeed002));
  app.add_option("--epochs", s.epochs, "number of epochs")->check(at_least(1));
  app.add_option("--batch-size", s.batch_size,
                 "samples per batch (with --workers: the global batch, shared by the workers)");
  app.add_option("--lr", s.lr, "learning rate");
  app.add_option("--lr-schedule", s.schedule,
                 "constant | step:EPOCHS:GAMMA | exp:DECAY_STEPS:RATE[:staircase]");
  app.add_option("--optimizer", s.opt.name, "sgd | adagrad | adam");
  app.add_option("--momentum", s.opt.momentum, "SGD momentum");
  app.add_flag("--nesterov", s.opt.nesterov, "SGD with Nesterov momentum");
  app.add_option("--weight-decay", s.opt.weight_decay, "L2 weight decay");
  app.add_option("--loss", s.loss_name, "cross_entropy | softmax_mse (seed-002's loss)");
  app.add_option("--backend", s.backend_name,
                 "cpu, cpu:ref, cpu:threads=N, cuda:N (docs/cuda.md)");
  app.add_option("--workers", s.workers,
                 "data-parallel workers: a comma-separated list of devices run as threads "
                 "(cpu:threads=1,cpu:threads=1), or mpi (one worker per MPI rank: mpirun -np N "
                 "telar train --workers mpi ...). Test knobs: DEVICE:slowdown=F, "
                 "DEVICE:fail_at_step=N (docs/dist.md)");
  app.add_option("--communicator", s.communicator,
                 "how the workers exchange gradients: auto (NCCL when every worker is its own "
                 "cuda:N and NCCL is built, else threads or MPI) | threads | nccl (docs/dist.md)");
  app.add_option("--balance", s.balance,
                 "work split between workers: equal | factor:F[@RANK] | weights:A/B/... | auto "
                 "(measured in a warm-up) | dynamic (re-measured every epoch)");
  app.add_option("--shard", s.shard, "interleaved (the single-worker batches, split) | contiguous "
                                     "(a block of the data per worker, as the thesis)");
  app.add_option("--bucket-mb", s.bucket_mb, "gradient all-reduce bucket size in MiB");
  app.add_flag("--no-overlap", s.no_overlap,
               "all-reduce after the backward pass instead of during it");
  app.add_flag("--no-pin", s.no_pin,
               "thread workers: leave their placement to the scheduler (by default each is pinned "
               "to cores of its own when their threads fit the cores this process may use)");
  app.add_option("--warmup-seconds", s.warmup_seconds,
                 "warm-up of --balance auto|dynamic: all workers train this long at once, in "
                 "each round (up to four, until the shares settle)")
      ->check(positive_real(true));
  app.add_option("--warmup-steps", s.warmup_steps, "... and at least this many steps each")
      ->check(at_least(1));
  app.add_option("--bn-buffers", s.bn_buffers,
                 "BatchNorm running statistics across workers: average (sample-weighted) | "
                 "broadcast (rank 0's, as DDP)");
  app.add_option("--energy-interval", s.energy_interval_ms,
                 "energy meter sampling interval in ms (RAPL, NVML; docs/energy.md)")
      ->check(positive_real());
  app.add_flag("--no-energy", s.no_energy, "do not measure energy");
  app.add_option("--powercap-root", s.powercap_root,
                 "RAPL powercap tree (default $TELAR_POWERCAP_ROOT or /sys/class/powercap)");
  app.add_option("--meters", s.meters, "energy meters to read: rapl, nvml or both (default rapl,nvml)");
  app.add_option("--seed", s.seed, "seed of initialization, data order and dropout");
  app.add_option("--out", s.out, "run directory (default: runs/train-DATE-TIME)");
  app.add_option("--resume", s.resume, "continue the run in this directory from its checkpoint");
  app.add_option("--limit-batches", s.limit_batches, "train at most N batches per epoch (0: all)")
      ->check(at_least(0));
  app.add_option("--checkpoint-every", s.checkpoint_every,
                 "also write the checkpoint every N optimizer steps (0: only at epoch ends)")
      ->check(at_least(0));
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
  app.add_option("--profile-colon", s.profile_colon,
                 "with --profile: also append the seed's `cpu:value::event` lines to this file");
  add_threads_option(app, &s.threads);
  app.add_flag("--json", s.json, "print the result as one JSON object on the last line");
  app.add_flag("--quiet", s.quiet, "no progress output");
}

// The options a run was started with, as tokens (--name=value, or --name for a flag), so that
// `--resume DIR` can continue with them: output and verbosity options are left out.
std::vector<std::string> options_to_keep(const CLI::App& app) {
  std::vector<std::string> tokens;
  for (const CLI::Option* opt : app.get_options()) {
    const std::string name = opt->get_name();
    if (opt->count() == 0 || name == "--out" || name == "--resume" || name == "--json" ||
        name == "--quiet" || name == "--help")
      continue;
    if (opt->get_expected_min() == 0) {
      tokens.push_back(name);
      continue;
    }
    for (const std::string& value : opt->results()) tokens.push_back(name + "=" + value);
  }
  return tokens;
}

// `--resume DIR` continues with the options the run was started with; options given again
// win (a repeated option takes its last value), e.g. a larger --epochs.
Args with_resumed_options(const fs::path& dir, const Args& args) {
  const fs::path run_json = dir / "run.json";
  if (!fs::exists(run_json)) return args;
  const auto run = nlohmann::json::parse(read_file(run_json), nullptr, false);
  if (!run.is_object() || !run.contains("config") || !run["config"].contains("options"))
    return args;
  Args merged = run["config"]["options"].get<std::vector<std::string>>();
  merged.insert(merged.end(), args.begin(), args.end());
  return merged;
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
    if (!p.resume.empty()) args = with_resumed_options(p.resume, given);
  }
  auto app_ptr = make_app();
  CLI::App& app = *app_ptr;
  Setup s;
  add_train_options(app, s);
  int code = 0;
  if (!parse(app, args, "train", &code)) return code;
  apply_preset(app, s);
  if (s.quiet) log::set_level(log::Level::Quiet);
  require(!s.model.model.empty(), "--model is required (or --preset {}); see telar models",
          kPresetSeed002);
  require(s.batch_size > 0, "--batch-size must be positive, got {}", s.batch_size);
  require(s.lr > 0.0 && std::isfinite(s.lr), "--lr must be a positive number, got {}", s.lr);
  apply_threads(s.threads);

  // Everything that can fail on bad input happens before the run directory is created.
  s.meter_options.powercap_root = s.powercap_root;
  energy::select_meters(s.meter_options, s.meters);
  if (!s.profile_events.empty()) {
    s.profile.events = prof::parse_event_argument(s.profile_events);
    s.profile.scopes = prof::ScopeSet::parse(s.profile_scopes, "--profile-scopes");
    s.profile.counting.domain = prof::parse_domain(s.profile_domain, "--profile-domain");
    s.profile.counting.multiplex = !s.profile_no_multiplex;
    if (!s.profile_cpus.empty()) {
      s.profile.counting.mode = prof::CountingMode::PerCpu;
      s.profile.counting.cpus = prof::parse_cpu_list(s.profile_cpus, "--profile-cpus");
      prof::check_cpus_online(s.profile.counting.cpus, "--profile-cpus");
    }
    if (!s.profile_colon.empty()) prof::check_output_file(s.profile_colon, "--profile-colon");
  } else {
    for (const char* o : {"--profile-scopes", "--profile-cpus", "--profile-domain",
                          "--profile-no-multiplex", "--profile-colon"})
      require(app.count(o) == 0, "{} sets up counting; it needs --profile EVENTS", o);
  }
  if (!s.workers.empty()) {
    require(app.count("--backend") == 0,
            "--workers names the devices; drop --backend (e.g. --workers cpu:threads=1,cpu:threads=1)");
    s.worker_list = dist::parse_workers(s.workers);
    if (!s.profile_events.empty()) {
      require(!s.worker_list.mpi,
              "--profile counts this process; with --workers mpi each rank is its own process: "
              "count the job on this machine with telar prof run -e EVENTS -- mpirun -np N telar train ...");
      require(!s.profile.scopes.contains(prof::ScopeKind::Node),
              "--profile-scopes node: with --workers the counts are the whole process's, so a "
              "layer of one worker cannot be told apart; use run,epoch,batch,eval");
    }
    s.communicator_kind = dist::choose_communicator(s.communicator, s.worker_list, dist::nccl_available());
    s.dp.balance = dist::Balance::parse(s.balance);
    s.dp.shard = dist::parse_shard_mode(s.shard);
    require(s.bucket_mb > 0 && std::isfinite(s.bucket_mb), "--bucket-mb must be positive, got {}",
            s.bucket_mb);
    s.dp.replica.bucket_bytes = static_cast<std::size_t>(s.bucket_mb * 1024 * 1024);
    s.dp.replica.overlap = !s.no_overlap;
    if (s.bn_buffers == "average")
      s.dp.replica.buffers = dist::BufferSync::Average;
    else if (s.bn_buffers == "broadcast")
      s.dp.replica.buffers = dist::BufferSync::Broadcast;
    else
      fail("--bn-buffers {}: use average or broadcast", s.bn_buffers);
    s.dp.warmup_steps = s.warmup_steps;
    s.dp.warmup_seconds = s.warmup_seconds;
    if (!s.worker_list.mpi) {
      const auto n = static_cast<std::int64_t>(s.worker_list.workers.size());
      s.dp.balance.initial_shares(static_cast<int>(n));  // checks
      require(s.batch_size >= n,
              "--batch-size {} is the global batch; it must give each of the {} workers at least "
              "one sample",
              s.batch_size, n);
      for (const auto& w : s.worker_list.workers) {  // a bad device fails here, not in a thread
        if (w.device.kind != "cpu" && w.device.kind != "cuda")
          fail("--workers {}: worker '{}' needs the {} backend, which thread workers do not run",
               s.workers, w.text, w.device.kind);
        try {
          backend::check_usable(w.device, "cpu workers");  // cuda: built in, a device present
        } catch (const Error& e) {
          fail("--workers {}: worker '{}': {}", s.workers, w.text, e.what());
        }
      }
      s.thread_workers = s.worker_list.workers;
      dist::assign_threads(s.thread_workers);
      if (!s.no_pin) {
        std::vector<int> threads;
        for (const auto& w : s.thread_workers) threads.push_back(w.host_threads);
        s.worker_cpus = dist::plan_pinning(threads, dist::allowed_cpus());
      }
    } else {
      require(!s.no_pin, "--no-pin is for thread workers; mpirun places the ranks (e.g. "
                         "mpirun --bind-to none)");
      require(dist::mpi_available(), "--workers mpi: this telar was built without MPI; install "
                                     "libopenmpi-dev (scripts/setup.sh) and rebuild");
    }
  } else {
    for (const char* o : {"--communicator", "--balance", "--shard", "--bucket-mb", "--no-overlap", "--no-pin",
                          "--warmup-steps", "--warmup-seconds", "--bn-buffers"})
      require(app.count(o) == 0, "{} sets up data-parallel training; it needs --workers", o);
    backend::check_usable(backend::parse_backend_spec(s.backend_name));
  }
  s.train_set = s.data.load_train(s.seed);
  s.test_set = s.data.load_test(s.seed);
  s.zoo = s.model.zoo_options();
  if (!s.zoo.input) s.zoo.input = s.train_set.sample_shape();
  if (!s.zoo.classes && s.model.model.rfind("mlp", 0) != 0) s.zoo.classes = s.train_set.num_classes;
  s.net = graph::zoo::build(s.model.model, s.zoo);
  const auto& out_shape = s.net.value(s.net.outputs()[0]).shape;
  if (out_shape.size() != 2 || out_shape[1] < s.train_set.num_classes)
    fail("model '{}' produces {} outputs per sample but the data has {} classes; set --classes "
         "{}",
         s.model.model, shape_str(out_shape), s.train_set.num_classes, s.train_set.num_classes);
  s.loss_kind = graph::parse_loss(s.loss_name);
  if (s.loss_kind != graph::LossKind::CrossEntropy && s.loss_kind != graph::LossKind::SoftmaxMSE)
    fail("--loss {} needs float targets; classification training takes cross_entropy or "
         "softmax_mse",
         s.loss_name);
  s.g = graph::with_loss(s.net, s.loss_kind);
  auto optimizer = train::make_optimizer(s.opt);  // validates the optimizer options
  auto lr_schedule = train::LrSchedule::parse(s.schedule, s.lr);

  if (!s.data.validation.empty()) {
    auto split = train::split_train_validation(
        s.train_set.size(), train::ValidationSize::parse(s.data.validation), s.seed);
    s.train_idx = std::move(split.train);
    s.val_idx = std::move(split.validation);
  } else {
    for (std::int64_t i = 0; i < s.train_set.size(); ++i) s.train_idx.push_back(i);
  }
  for (std::int64_t i = 0; i < s.test_set.size(); ++i) s.test_idx.push_back(i);

  s.config = {{"model", s.model.model},
              {"input", fmt::format("{}", fmt::join(*s.zoo.input, "x"))},
              {"classes", s.zoo.classes.value_or(out_shape[1])},
              {"data", s.data.describe()},
              {"train_samples", static_cast<std::int64_t>(s.train_idx.size())},
              {"validation_samples", static_cast<std::int64_t>(s.val_idx.size())},
              {"test_samples", s.test_set.size()},
              {"epochs", s.epochs},
              {"batch_size", s.batch_size},
              {"lr", s.lr},
              {"lr_schedule", lr_schedule.spec()},
              {"optimizer", optimizer->describe()},
              {"loss", graph::loss_name(s.loss_kind)},
              {"backend", s.workers.empty() ? s.backend_name : s.workers},
              {"threads", compute_threads()},
              {"seed", s.seed},
              {"parameters", s.net.parameter_count()}};
  if (!s.preset.empty()) s.config["preset"] = s.preset;
  s.config["options"] = options_to_keep(app);
  if (!s.workers.empty())
    s.config["data_parallel"] = {{"workers", s.workers},
                                 {"balance", s.balance},
                                 {"shard", s.shard},
                                 {"bucket_mb", s.bucket_mb},
                                 {"overlap", !s.no_overlap},
                                 {"cpus", s.worker_cpus},
                                 {"bn_buffers", s.bn_buffers}};

  s.run_path = s.out.empty() ? report::default_run_path("train") : fs::path(s.out);
  if (!s.resume.empty()) {
    if (!s.out.empty() && fs::path(s.out) != fs::path(s.resume))
      fail("--resume continues in its own directory; drop --out or make it equal to --resume");
    s.run_path = s.resume;
    const fs::path ckpt = s.run_path / train::kCheckpointFileName;
    if (!fs::exists(ckpt))
      fail("--resume {}: no checkpoint there ({} is missing)", s.resume, ckpt.string());
  }

  // The profiler opens its counters before training starts: on every thread there is now, and
  // threads started later (the workers, their pools and collective threads) inherit them.
  std::unique_ptr<prof::TrainingProfiler> profiler;
  if (!s.profile_events.empty())
    profiler = std::make_unique<prof::TrainingProfiler>(
        s.profile, s.workers.empty() ? prof::TrainingProfiler::Work::ComputePool
                                     : prof::TrainingProfiler::Work::WorkerThreads);
  if (s.workers.empty())
    train_replica(s, nullptr, nullptr, profiler.get());
  else if (s.worker_list.mpi)
    train_mpi(s);
  else if (s.communicator_kind == "nccl")
    train_nccl(s, profiler.get());
  else
    train_threads(s, profiler.get());
  return 0;
}

}  // namespace telar::cli
