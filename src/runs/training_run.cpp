#include "runs/training_run.hpp"

#include <fmt/format.h>

#include <optional>
#include <set>

#include "backend/backend.hpp"
#include "backend/measure.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/interrupt.hpp"
#include "core/log.hpp"
#include "core/memory.hpp"
#include "core/threads.hpp"
#include "dist/communicator_choice.hpp"
#include "dist/data_parallel.hpp"
#include "dist/mpi_communicator.hpp"
#include "dist/nccl_communicator.hpp"
#include "dist/pinning.hpp"
#include "dist/worker_threads.hpp"
#include "graph/parameters.hpp"
#include "prof/html_report.hpp"
#include "prof/training_profiler.hpp"
#include "prof/writers.hpp"
#include "report/run_dir.hpp"
#include "report/run_record.hpp"
#include "report/training_recorder.hpp"
#include "train/callbacks/checkpoint_callback.hpp"
#include "train/callbacks/profile_callback.hpp"
#include "train/callbacks/progress_callback.hpp"
#include "train/checkpoint.hpp"
#include "train/data/data_loader.hpp"
#include "train/data/split.hpp"
#include "train/trainer.hpp"

namespace telar::runs {

namespace fs = std::filesystem;

namespace {

nlohmann::json metrics_json(const train::PhaseMetrics& m) {
  return {{"loss", m.loss}, {"accuracy", m.accuracy}, {"samples", m.samples}};
}

// The setup resolved: the same on every worker.
struct Plan {
  explicit Plan(const TrainingSetup& setup) : s(setup) {}
  const TrainingSetup& s;
  graph::Graph g;  // the model with its loss
  std::vector<std::int64_t> train_idx, val_idx, test_idx;
  dist::WorkerList worker_list;
  std::string communicator_kind;
  std::vector<dist::WorkerSpec> thread_workers;  // thread workers, compute threads made explicit
  std::vector<std::vector<int>> worker_cpus;     // the cores each thread worker is pinned to
  dist::DataParallelOptions dp;
  nlohmann::json config;
  fs::path run_path;
  report::RunReuse reuse = report::RunReuse::Refuse;
};

// Checks the data-parallel options and resolves the workers (nothing is written yet).
void resolve_workers(const TrainingSetup& s, Plan& p) {
  p.worker_list = dist::parse_workers(s.workers);
  if (s.profile) {
    require(!p.worker_list.mpi,
            "--profile counts this process; with --workers mpi each rank is its own process: "
            "count the job on this machine with telar prof run -e EVENTS -- mpirun -np N telar "
            "train ...");
    require(!s.profile->scopes.contains(prof::ScopeKind::Node),
            "--profile-scopes node: with --workers the counts are the whole process's, so a "
            "layer of one worker cannot be told apart; use run,epoch,batch,eval");
  }
  p.communicator_kind =
      dist::choose_communicator(s.communicator, p.worker_list, dist::nccl_available());
  p.dp.balance = dist::Balance::parse(s.balance);
  p.dp.shard = dist::parse_shard_mode(s.shard);
  require(s.bucket_mb > 0 && std::isfinite(s.bucket_mb), "--bucket-mb must be positive, got {}",
          s.bucket_mb);
  p.dp.replica.bucket_bytes = static_cast<std::size_t>(s.bucket_mb * 1024 * 1024);
  p.dp.replica.overlap = s.overlap;
  if (s.bn_buffers == "average")
    p.dp.replica.buffers = dist::BufferSync::Average;
  else if (s.bn_buffers == "broadcast")
    p.dp.replica.buffers = dist::BufferSync::Broadcast;
  else
    fail("--bn-buffers {}: use average or broadcast", s.bn_buffers);
  p.dp.warmup_steps = s.warmup_steps;
  p.dp.warmup_seconds = s.warmup_seconds;
  if (p.worker_list.mpi) {
    require(s.pin, "--no-pin is for thread workers; mpirun places the ranks (e.g. mpirun "
                   "--bind-to none)");
    require(dist::mpi_available(), "--workers mpi: this telar was built without MPI; install "
                                   "libopenmpi-dev (scripts/setup.sh) and rebuild");
    return;
  }
  const auto n = static_cast<std::int64_t>(p.worker_list.workers.size());
  p.dp.balance.initial_shares(static_cast<int>(n));  // checks
  require(s.batch_size >= n,
          "--batch-size {} is the global batch; it must give each of the {} workers at least one "
          "sample",
          s.batch_size, n);
  for (const auto& w : p.worker_list.workers) {  // a bad device fails here, not in a thread
    if (w.device.kind != "cpu" && w.device.kind != "cuda")
      fail("--workers {}: worker '{}' needs the {} backend, which thread workers do not run",
           s.workers, w.text, w.device.kind);
    try {
      backend::check_usable(w.device, "cpu workers");  // cuda: built in, a device present
    } catch (const Error& e) {
      fail("--workers {}: worker '{}': {}", s.workers, w.text, e.what());
    }
  }
  p.thread_workers = p.worker_list.workers;
  dist::assign_threads(p.thread_workers);
  if (s.pin) {
    std::vector<int> threads;
    for (const auto& w : p.thread_workers) threads.push_back(w.host_threads);
    p.worker_cpus = dist::plan_pinning(threads, dist::allowed_cpus());
  }
}

// Everything that can fail on bad input, before the run directory is made.
// Refuses, before anything is allocated, a training whose estimate (every replica's parameters,
// gradients, optimizer state and a batch's activations with their gradients; the data sets
// are checked where they are read) exceeds --max-memory or what the machine has available.
void check_training_fits(const TrainingSetup& s, const Plan& p, const train::Optimizer& optimizer) {
  const std::optional<std::int64_t> available = available_memory_bytes();
  const std::optional<std::int64_t> limit =
      s.max_memory > 0 ? std::optional<std::int64_t>(s.max_memory) : available;
  if (!limit) return;
  const std::size_t replicas = std::max<std::size_t>(p.thread_workers.size(), 1);
  const double need = static_cast<double>(replicas) *
                      static_cast<double>(backend::training_memory_bytes(
                          p.g, s.batch_size, static_cast<std::int64_t>(optimizer.state_slots())));
  if (need > static_cast<double>(*limit))
    fail(
        "training {} at batch {} needs at least {} ({}parameters, gradients, optimizer state "
        "and activations), more than the {} {}; use a smaller --batch-size or model{}",
        s.model_name, s.batch_size, bytes_text(need),
        replicas > 1 ? fmt::format("{} replicas' ", replicas) : "",
        bytes_text(static_cast<double>(*limit)),
        s.max_memory > 0 ? "of --max-memory" : "this machine has available",
        s.max_memory > 0 ? ", or raise --max-memory" : "");
}

Plan make_plan(const TrainingSetup& s) {
  Plan p(s);
  require(s.batch_size > 0, "--batch-size must be positive, got {}", s.batch_size);
  require(s.train_set.size() > 0, "the training data ({}) holds no samples", s.data_description);
  require(s.test_set.size() > 0, "the test data ({}) holds no samples", s.data_description);
  require(s.test_set.sample_shape() == s.train_set.sample_shape(),
          "the test data ({}) holds samples of shape {} but the training data {}; give a test set "
          "of the training set's image size",
          s.data_description, shape_str(s.test_set.sample_shape()),
          shape_str(s.train_set.sample_shape()));
  require(s.lr > 0.0 && std::isfinite(s.lr), "--lr must be a positive number, got {}", s.lr);
  if (!s.workers.empty())
    resolve_workers(s, p);
  else
    backend::check_usable(backend::parse_backend_spec(s.backend));
  const auto& out_shape = s.net.value(s.net.outputs()[0]).shape;
  if (out_shape.size() != 2)
    fail(
        "model '{}' produces {}, not a score per class ([B, classes]): telar trains "
        "classifiers on labelled samples ({}); a segmentation or detection model's outputs do "
        "not fit them",
        s.model_name, shape_str(out_shape), s.data_description);
  if (out_shape[1] < s.train_set.num_classes)
    fail(
        "model '{}' scores {} classes but the data has {}; set --classes {} (a zoo model), or "
        "export the model with that many (an ONNX file)",
        s.model_name, out_shape[1], s.train_set.num_classes, s.train_set.num_classes);
  if (s.loss != graph::LossKind::CrossEntropy && s.loss != graph::LossKind::SoftmaxMSE)
    fail("--loss {} needs float targets; classification training takes cross_entropy or "
         "softmax_mse",
         graph::loss_name(s.loss));
  p.g = graph::with_loss(s.net, s.loss);
  auto optimizer = train::make_optimizer(s.optimizer);  // validates the optimizer options
  check_training_fits(s, p, *optimizer);
  auto lr_schedule = train::LrSchedule::parse(s.lr_schedule, s.lr);

  if (!s.validation.empty()) {
    auto split = train::split_train_validation(
        s.train_set.size(), train::ValidationSize::parse(s.validation), s.seed);
    p.train_idx = std::move(split.train);
    p.val_idx = std::move(split.validation);
  } else {
    for (std::int64_t i = 0; i < s.train_set.size(); ++i) p.train_idx.push_back(i);
  }
  for (std::int64_t i = 0; i < s.test_set.size(); ++i) p.test_idx.push_back(i);

  p.config = {{"model", s.model_name},
              {"data", s.data_description},
              {"train_samples", static_cast<std::int64_t>(p.train_idx.size())},
              {"validation_samples", static_cast<std::int64_t>(p.val_idx.size())},
              {"test_samples", s.test_set.size()},
              {"epochs", s.epochs},
              {"batch_size", s.batch_size},
              {"lr", s.lr},
              {"lr_schedule", lr_schedule.spec()},
              {"optimizer", optimizer->describe()},
              {"loss", graph::loss_name(s.loss)},
              {"backend", s.workers.empty() ? s.backend : s.workers},
              {"threads", compute_threads()},
              {"seed", s.seed},
              {"parameters", s.net.parameter_count()}};
  p.config.update(s.extra_config);
  if (!s.workers.empty())
    p.config["data_parallel"] = {{"workers", s.workers},    {"balance", s.balance},
                                 {"shard", s.shard},        {"bucket_mb", s.bucket_mb},
                                 {"overlap", s.overlap},    {"cpus", p.worker_cpus},
                                 {"bn_buffers", s.bn_buffers}};

  p.run_path = s.out.empty() ? report::default_run_path("train") : s.out;
  p.reuse = report::reuse_for(s.overwrite);
  if (!s.resume.empty()) {
    if (!s.out.empty() && s.out != s.resume)
      fail("--resume continues in its own directory; drop --out or make it equal to --resume");
    p.run_path = s.resume;
    p.reuse = report::RunReuse::Continue;
    const fs::path ckpt = p.run_path / train::kCheckpointFileName;
    if (!fs::exists(ckpt))
      fail("--resume {}: no checkpoint there ({} is missing)", s.resume.string(), ckpt.string());
  }
  report::check_run_path(p.run_path, p.reuse);
  return p;
}

// The part of one worker (or of the lone trainer: comm == nullptr). Returns the outcome on
// the leader, with run.json written. `profiler` (--profile) is opened by the caller, before
// any worker thread starts; the leader's hooks drive its scopes.
std::optional<TrainingOutcome> train_replica(const Plan& p, dist::Communicator* comm,
                                             const dist::WorkerSpec* spec,
                                             prof::TrainingProfiler* profiler) {
  const TrainingSetup& s = p.s;
  const bool leader = comm == nullptr || comm->rank() == 0;
  graph::ParameterSet params = graph::ParameterSet::initialize(p.g, s.seed);
  if (s.initial_weights)  // copied: each worker updates its own
    for (graph::ValueId id : s.initial_weights->ids()) params.at(id).copy_from(s.initial_weights->at(id));
  auto optimizer = train::make_optimizer(s.optimizer);
  auto lr_schedule = train::LrSchedule::parse(s.lr_schedule, s.lr);

  train::Progress start;
  if (!s.resume.empty()) {
    start = train::to_progress(train::load_checkpoint(p.run_path / train::kCheckpointFileName, p.g,
                                                      params, optimizer.get()));
    if (start.epoch >= s.epochs)
      fail("--resume {}: the run already finished {} epochs; raise --epochs to train more",
           s.resume.string(), start.epoch);
    if (leader)
      log::info("resuming {} at epoch {} batch {} (step {})", s.resume.string(), start.epoch + 1,
                start.next_batch, start.global_step);
  }

  std::unique_ptr<train::ProfileCallback> profile_callback;
  if (profiler && leader)
    profile_callback = std::make_unique<train::ProfileCallback>(
        *profiler, s.profile->scopes.contains(prof::ScopeKind::Node));

  // The executable and the batch sources: the lone trainer's own, or the worker's shares.
  std::unique_ptr<backend::Executable> solo_exe;
  std::unique_ptr<train::DataLoader> solo_train, solo_val, solo_test;
  std::unique_ptr<dist::DataParallelWorker> worker;
  backend::Executable* exe = nullptr;
  train::BatchSource *train_source = nullptr, *val_source = nullptr, *test_source = nullptr;
  if (comm) {
    worker = std::make_unique<dist::DataParallelWorker>(*comm, *spec, p.g, params, p.dp, s.seed);
    exe = &worker->executable();
    train_source = &worker->set_train_data(s.train_set, p.train_idx, s.batch_size, s.seed);
    test_source = &worker->add_eval_data(s.test_set, p.test_idx, s.batch_size);
    if (!p.val_idx.empty())
      val_source = &worker->add_eval_data(s.train_set, p.val_idx, s.batch_size);
  } else {
    solo_exe = backend::compile(backend::parse_backend_spec(s.backend), p.g, params, {s.seed});
    exe = solo_exe.get();
    solo_train = std::make_unique<train::DataLoader>(
        s.train_set, p.train_idx, train::LoaderOptions{s.batch_size, true, false, s.seed});
    solo_test = std::make_unique<train::DataLoader>(
        s.test_set, train::LoaderOptions{s.batch_size, false, false, s.seed});
    train_source = solo_train.get();
    test_source = solo_test.get();
    if (!p.val_idx.empty()) {
      solo_val = std::make_unique<train::DataLoader>(
          s.train_set, p.val_idx, train::LoaderOptions{s.batch_size, false, false, s.seed});
      val_source = solo_val.get();
    }
  }

  train::Trainer trainer(*exe, params, *optimizer, lr_schedule, {s.epochs, s.limit_batches});
  trainer.set_progress(start);
  if (worker) trainer.set_group(worker.get());

  // Only the leader writes: the run directory, the metrics, the checkpoint, the progress.
  std::unique_ptr<report::RunDirectory> run;
  std::unique_ptr<report::RunRecord> record;
  std::unique_ptr<train::ProgressCallback> progress;
  std::unique_ptr<report::TrainingRecorder> recorder;
  std::unique_ptr<train::CheckpointCallback> checkpointer;
  if (leader) {
    run = std::make_unique<report::RunDirectory>(p.run_path, p.reuse);
    const std::string device =
        worker ? fmt::format("{} workers ({}): {}; balance {}", comm->size(), comm->kind(),
                             s.workers, s.balance)
               : exe->name() + fmt::format(", {} threads", compute_threads());
    progress = std::make_unique<train::ProgressCallback>();
    recorder = std::make_unique<report::TrainingRecorder>(
        *run, fmt::format("telar train: {}", s.model_name),
        std::vector<std::pair<std::string, std::string>>{
            {"model", fmt::format("{} ({} parameters)", s.model_name, s.net.parameter_count())},
            {"data", s.data_description},
            {"optimizer", optimizer->describe()},
            {"batch size", std::to_string(s.batch_size) + (worker ? " (global)" : "")},
            {"epochs", std::to_string(s.epochs)},
            {"backend", device}},
        s.resume.empty() ? -1 : start.epoch);
    checkpointer = std::make_unique<train::CheckpointCallback>(
        run->file(train::kCheckpointFileName), p.g, params, *optimizer, trainer, p.config.dump(),
        s.checkpoint_every);
    trainer.add_callback(progress.get());
    trainer.add_callback(recorder.get());
    trainer.add_callback(checkpointer.get());
    if (profile_callback) trainer.add_callback(profile_callback.get());
    record = std::make_unique<report::RunRecord>(*run, "train", p.config);
    log::info("training {} ({} parameters) on {} ({} samples), {} epochs, batch {}, {} on {}",
              s.model_name, s.net.parameter_count(), s.data_description, p.train_idx.size(),
              s.epochs, s.batch_size, optimizer->describe(), device);
  }

  // Energy of the devices over the training loop and the final evaluation (start-up and the
  // warm-up excluded, as the thesis did); on the leader, for its machine.
  std::unique_ptr<energy::EnergySampler> sampler;
  if (leader && s.measure_energy) {
    sampler = energy::make_sampler(s.energy_interval_ms / 1000.0, s.meters);
    std::set<int> gpus;
    auto note_gpu = [&](const backend::BackendSpec& d) {
      if (d.kind == "cuda") gpus.insert(d.target.empty() ? 0 : std::atoi(d.target.c_str()));
    };
    if (!comm) note_gpu(backend::parse_backend_spec(s.backend));
    for (const auto& w : p.worker_list.workers) note_gpu(w.device);
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
    } catch (const Interrupted& e) {
      const train::Progress& at = trainer.progress();
      if (checkpointer) checkpointer->save_now();
      if (record)
        record->interrupt({{"signal", signal_name(e.signal)},
                           {"epoch", at.epoch + 1},
                           {"next_batch", at.next_batch},
                           {"global_step", at.global_step}});
      throw Interrupted(fmt::format("{}; {}", e.what(),
                                    checkpointer && checkpointer->written()
                                        ? fmt::format("the checkpoint is saved: continue with "
                                                      "`telar train --resume {}`",
                                                      p.run_path.string())
                                        : std::string("no checkpoint could be written")),
                        e.signal);
    } catch (const train::NonFiniteLoss& e) {
      // Every worker meets it at the same step; each stops by itself.
      if (record) record->stop("non-finite loss");
      throw train::NonFiniteLoss(
          fmt::format("{}; {}", e.what(),
                      checkpointer && checkpointer->written()
                          ? fmt::format("the last good checkpoint is {}",
                                        checkpointer->path().string())
                          : std::string("no checkpoint was written before it")),
          e.epoch, e.batch, e.step);
    }
  };
  auto guarded = [&] {
    if (worker)
      worker->guard(body);
    else
      body();
  };
  if (record)
    record->guard(guarded);
  else
    guarded();
  const double total_seconds = loop_clock.seconds();
  if (!leader) return std::nullopt;

  TrainingOutcome outcome;
  outcome.run_dir = run->path();
  if (sampler) {
    outcome.energy = sampler->stop();
    if (outcome.energy->measured) sampler->write_csv(run->file("energy.csv"));
  }
  if (profiler) {
    outcome.profile = profiler->finish();
    ensure_writable_dir(run->file("profile"));
    prof::write_profile_files(
        *outcome.profile, run->file("profile"),
        worker ? fmt::format("telar train --profile: {}, {} workers (the whole process)",
                             s.model_name, comm->size())
               : fmt::format("telar train --profile: {}", s.model_name));
    if (!s.profile_colon.empty()) prof::append_colon_file(*outcome.profile, s.profile_colon);
  }
  const auto& progress_so_far = trainer.progress();
  double train_seconds = 0.0;
  for (double sec : progress_so_far.epoch_seconds) train_seconds += sec;
  // Global batches: every sample of the epoch once, the last batch possibly smaller.
  const std::int64_t n = static_cast<std::int64_t>(p.train_idx.size());
  const std::int64_t steps = (n + s.batch_size - 1) / s.batch_size;
  const std::int64_t per_epoch = s.limit_batches > 0 ? std::min(s.limit_batches, steps) : steps;
  std::int64_t samples_per_epoch = 0;
  for (std::int64_t i = 0; i < per_epoch; ++i)
    samples_per_epoch += std::min(s.batch_size, n - i * s.batch_size);
  const std::int64_t samples_total =
      samples_per_epoch * static_cast<std::int64_t>(progress_so_far.epoch_seconds.size());
  const double samples_per_s =
      train_seconds > 0 ? static_cast<double>(samples_total) / train_seconds : 0.0;
  // Each epoch's own figure: the first epoch also makes the kernels' plans and touches fresh
  // memory, so a later epoch's is the steady-state throughput.
  std::vector<double> epoch_samples_per_s;
  for (double sec : progress_so_far.epoch_seconds)
    epoch_samples_per_s.push_back(sec > 0 ? static_cast<double>(samples_per_epoch) / sec : 0.0);
  nlohmann::json result = {{"train", metrics_json(trainer.state().train)},
                           {"test", metrics_json(test)},
                           {"samples_per_s", samples_per_s},
                           {"epoch_samples_per_s", epoch_samples_per_s},
                           {"epoch_seconds", progress_so_far.epoch_seconds},
                           {"train_seconds", train_seconds},
                           {"loop_seconds", loop_seconds},
                           {"total_seconds", total_seconds},
                           {"run_dir", run->path().string()}};
  if (val_source) result["validation"] = metrics_json(validation);
  if (worker) result["data_parallel"] = worker->describe();
  if (outcome.energy) result["energy"] = outcome.energy->to_json();
  record->finish(result);
  outcome.result = std::move(result);
  return outcome;
}

// Pins the calling worker thread to its cores (when the workers were given cores); the threads
// it starts inherit them.
void pin_worker(const Plan& p, int rank) {
  if (p.worker_cpus.empty()) return;
  const auto& cpus = p.worker_cpus[static_cast<std::size_t>(rank)];
  if (!dist::pin_this_thread(cpus))
    log::warn("worker {}: could not pin it to cores {}; it runs where the scheduler puts it", rank,
              fmt::join(cpus, ","));
}

// Runs the group's members (threads of this process) through `members`: each builds its
// replica; the first failure ends them all and is reported naming the worker.
template <typename Members>
std::optional<TrainingOutcome> train_members(const Plan& p, Members&& members,
                                             prof::TrainingProfiler* profiler) {
  std::optional<TrainingOutcome> outcome;
  dist::run_worker_threads(std::forward<Members>(members), [&](dist::Communicator& comm) {
    pin_worker(p, comm.rank());
    const dist::WorkerSpec& spec = p.thread_workers[static_cast<std::size_t>(comm.rank())];
    dist::run_guarded(comm, dist::member_name(comm, spec.text), [&] {
      auto mine = train_replica(p, &comm, &spec, profiler);
      if (mine) outcome = std::move(mine);
    });
  });
  return outcome;
}

// The group's workers as threads of this process, pinned where they fit.
std::optional<TrainingOutcome> train_threads(const Plan& p, prof::TrainingProfiler* profiler) {
  if (!p.worker_cpus.empty()) {
    std::vector<std::string> where;
    for (std::size_t r = 0; r < p.worker_cpus.size(); ++r)
      where.push_back(fmt::format("worker {} on CPU {}", r, fmt::join(p.worker_cpus[r], ",")));
    log::info("pinned {} (--no-pin leaves them to the scheduler)", fmt::join(where, ", "));
  }
  return train_members(p, static_cast<int>(p.thread_workers.size()), profiler);
}

// The group's workers as threads of this process, each on its own GPU, joined by NCCL.
std::optional<TrainingOutcome> train_nccl(const Plan& p, prof::TrainingProfiler* profiler) {
  std::vector<int> devices;
  for (const auto& w : p.worker_list.workers) devices.push_back(dist::cuda_device_index(w.device));
  return train_members(p, dist::make_nccl_group(devices), profiler);
}

// One worker per MPI rank (mpirun -np N telar train --workers mpi ...).
std::optional<TrainingOutcome> train_mpi(const Plan& p) {
  auto comm = dist::open_mpi_world();
  if (comm->rank() != 0) log::set_level(log::Level::Quiet);
  if (comm->size() == 1)
    log::warn("--workers mpi: this is the only MPI rank; start N workers with "
              "mpirun -np N telar train --workers mpi ...");
  dist::WorkerSpec spec = p.worker_list.for_rank(comm->rank(), comm->size());
  // The ranks on this machine share its cores; each assumes the others are devices like its own.
  int local_ranks = 1;
  if (const char* v = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
    local_ranks = std::max(1, std::atoi(v));
  std::vector<dist::WorkerSpec> local(static_cast<std::size_t>(local_ranks), spec);
  dist::assign_threads(local);
  spec = local[0];
  std::optional<TrainingOutcome> outcome;
  dist::run_guarded(*comm, dist::member_name(*comm, spec.text),
                    [&] { outcome = train_replica(p, comm.get(), &spec, nullptr); });
  return outcome;
}

}  // namespace

std::optional<TrainingOutcome> run_training(const TrainingSetup& setup) {
  const Plan plan = make_plan(setup);
  // Ctrl-C or SIGTERM stops the training at the next batch boundary, with a checkpoint there;
  // a data-parallel group's members agree on that batch (Trainer). Installed before run.json
  // says "running", so a signal from then on is always a clean stop.
  StopOnSignal stop_on_signal;
  // The profiler opens its counters before training starts: on every thread there is now, and
  // threads started later (the workers, their pools and collective threads) inherit them.
  std::unique_ptr<prof::TrainingProfiler> profiler;
  if (setup.profile)
    profiler = std::make_unique<prof::TrainingProfiler>(
        *setup.profile, setup.workers.empty() ? prof::TrainingProfiler::Work::ComputePool
                                              : prof::TrainingProfiler::Work::WorkerThreads);
  if (setup.workers.empty()) return train_replica(plan, nullptr, nullptr, profiler.get());
  if (plan.worker_list.mpi) return train_mpi(plan);
  if (plan.communicator_kind == "nccl") return train_nccl(plan, profiler.get());
  return train_threads(plan, profiler.get());
}

}  // namespace telar::runs
