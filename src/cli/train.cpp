// telar train: trains a zoo model on a data set and writes a run directory.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "backend/backend.hpp"
#include "cli/data_options.hpp"
#include "cli/model_options.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/log.hpp"
#include "core/threads.hpp"
#include "graph/loss.hpp"
#include "graph/parameters.hpp"
#include "prof/event_list.hpp"
#include "prof/html_report.hpp"
#include "prof/table_writer.hpp"
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

}  // namespace

int run_train(const Args& args) {
  CLI::App app{"Train a model and write a run directory (run.json, metrics.csv, checkpoint, "
               "report.html).",
               "train"};
  ModelOptions model;
  model.add_to(app);
  DataOptions data;
  data.add_to(app);
  int epochs = 1, threads = 0;
  std::int64_t batch_size = 128, limit_batches = 0, checkpoint_every = 0;
  double lr = 0.05;
  std::string schedule = "constant", loss_name = "cross_entropy", backend_name = "cpu", out,
              resume, profile_events, profile_scopes = "run,epoch,batch,eval";
  train::OptimizerOptions opt;
  opt.momentum = 0.0f;
  std::uint64_t seed = 0;
  bool json = false, quiet = false;
  app.add_option("--epochs", epochs, "number of epochs")->check(CLI::PositiveNumber);
  app.add_option("--batch-size", batch_size, "samples per batch");
  app.add_option("--lr", lr, "learning rate");
  app.add_option("--lr-schedule", schedule,
                 "constant | step:EPOCHS:GAMMA | exp:DECAY_STEPS:RATE[:staircase]");
  app.add_option("--optimizer", opt.name, "sgd | adagrad | adam");
  app.add_option("--momentum", opt.momentum, "SGD momentum");
  app.add_flag("--nesterov", opt.nesterov, "SGD with Nesterov momentum");
  app.add_option("--weight-decay", opt.weight_decay, "L2 weight decay");
  app.add_option("--loss", loss_name, "cross_entropy | softmax_mse (seed-002's loss)");
  app.add_option("--backend", backend_name, "cpu, cpu:ref, cpu:threads=N");
  app.add_option("--seed", seed, "seed of initialization, data order and dropout");
  app.add_option("--out", out, "run directory (default: runs/train-DATE-TIME)");
  app.add_option("--resume", resume, "continue the run in this directory from its checkpoint");
  app.add_option("--limit-batches", limit_batches, "train at most N batches per epoch")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--checkpoint-every", checkpoint_every,
                 "also write the checkpoint every N optimizer steps")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--profile", profile_events,
                 "count these events during training: an events file (one name per line) or a "
                 "comma-separated list (telar prof list); results in RUN/profile/");
  app.add_option("--profile-scopes", profile_scopes,
                 "scopes to record: any of run,epoch,batch,eval,node (node: each layer's "
                 "forward and backward)");
  add_threads_option(app, &threads);
  app.add_flag("--json", json, "print the result as one JSON object on the last line");
  app.add_flag("--quiet", quiet, "no progress output");
  int code = 0;
  if (!parse(app, args, "train", &code)) return code;
  if (quiet) log::set_level(log::Level::Quiet);
  require(batch_size > 0, "--batch-size must be positive, got {}", batch_size);
  require(lr > 0.0 && std::isfinite(lr), "--lr must be a positive number, got {}", lr);
  apply_threads(threads);

  // Everything that can fail on bad input happens before the run directory is created.
  train::Dataset train_set = data.load_train(seed);
  train::Dataset test_set = data.load_test(seed);
  graph::zoo::ModelOptions zoo = model.zoo_options();
  if (!zoo.input) zoo.input = train_set.sample_shape();
  if (!zoo.classes && model.model.rfind("mlp", 0) != 0) zoo.classes = train_set.num_classes;
  graph::Graph net = graph::zoo::build(model.model, zoo);
  const auto& out_shape = net.value(net.outputs()[0]).shape;
  if (out_shape.size() != 2 || out_shape[1] < train_set.num_classes)
    fail("model '{}' produces {} outputs per sample but the data has {} classes; set --classes "
         "{}",
         model.model, shape_str(out_shape), train_set.num_classes, train_set.num_classes);
  const graph::LossKind loss_kind = graph::parse_loss(loss_name);
  if (loss_kind != graph::LossKind::CrossEntropy && loss_kind != graph::LossKind::SoftmaxMSE)
    fail("--loss {} needs float targets; classification training takes cross_entropy or "
         "softmax_mse",
         loss_name);
  graph::Graph g = graph::with_loss(net, loss_kind);
  auto optimizer = train::make_optimizer(opt);
  auto lr_schedule = train::LrSchedule::parse(schedule, lr);
  backend::BackendSpec spec = backend::parse_backend_spec(backend_name);

  std::vector<std::int64_t> train_idx, val_idx;
  if (!data.validation.empty()) {
    auto split = train::split_train_validation(
        train_set.size(), train::ValidationSize::parse(data.validation), seed);
    train_idx = std::move(split.train);
    val_idx = std::move(split.validation);
  } else {
    for (std::int64_t i = 0; i < train_set.size(); ++i) train_idx.push_back(i);
  }
  train::DataLoader train_loader(train_set, train_idx, {batch_size, true, false, seed});
  train::DataLoader test_loader(test_set, {batch_size, false, false, seed});
  std::unique_ptr<train::DataLoader> val_loader;
  if (!val_idx.empty())
    val_loader = std::make_unique<train::DataLoader>(train_set, val_idx,
                                                     train::LoaderOptions{batch_size, false, false, seed});

  graph::ParameterSet params = graph::ParameterSet::initialize(g, seed);
  nlohmann::json config = {{"model", model.model},
                           {"input", fmt::format("{}", fmt::join(*zoo.input, "x"))},
                           {"classes", zoo.classes.value_or(out_shape[1])},
                           {"data", data.describe()},
                           {"train_samples", static_cast<std::int64_t>(train_idx.size())},
                           {"validation_samples", static_cast<std::int64_t>(val_idx.size())},
                           {"test_samples", test_set.size()},
                           {"epochs", epochs},
                           {"batch_size", batch_size},
                           {"lr", lr},
                           {"lr_schedule", lr_schedule.spec()},
                           {"optimizer", optimizer->describe()},
                           {"loss", graph::loss_name(loss_kind)},
                           {"backend", backend_name},
                           {"threads", compute_threads()},
                           {"seed", seed},
                           {"parameters", net.parameter_count()}};

  train::Progress start;
  fs::path run_path = out.empty() ? report::default_run_path("train") : fs::path(out);
  if (!resume.empty()) {
    if (!out.empty() && fs::path(out) != fs::path(resume))
      fail("--resume continues in its own directory; drop --out or make it equal to --resume");
    run_path = resume;
    const fs::path ckpt = run_path / train::kCheckpointFileName;
    if (!fs::exists(ckpt))
      fail("--resume {}: no checkpoint there ({} is missing)", resume, ckpt.string());
    start = train::to_progress(train::load_checkpoint(ckpt, g, params, optimizer.get()));
    if (start.epoch >= epochs)
      fail("--resume {}: the run already finished {} epochs; raise --epochs to train more",
           resume, start.epoch);
    log::info("resuming {} at epoch {} batch {} (step {})", resume, start.epoch + 1,
              start.next_batch, start.global_step);
  }
  // The profiler opens its counters before the first parallel region, so that the compute
  // threads inherit them.
  std::unique_ptr<prof::TrainingProfiler> profiler;
  std::unique_ptr<train::ProfileCallback> profile_callback;
  if (!profile_events.empty()) {
    prof::SessionOptions o;
    o.events = prof::parse_event_argument(profile_events);
    o.scopes = prof::ScopeSet::parse(profile_scopes, "--profile-scopes");
    profiler = std::make_unique<prof::TrainingProfiler>(o);
    profile_callback = std::make_unique<train::ProfileCallback>(
        *profiler, o.scopes.contains(prof::ScopeKind::Node));
  }
  report::RunDirectory run(run_path);

  auto exe = backend::compile(spec, g, params, {seed});
  train::Trainer trainer(*exe, params, *optimizer, lr_schedule, {epochs, limit_batches});
  trainer.set_progress(start);
  train::ProgressCallback progress;
  report::TrainingRecorder recorder(
      run, fmt::format("telar train: {}", model.model),
      {{"model", fmt::format("{} ({} parameters)", model.model, net.parameter_count())},
       {"data", data.describe()},
       {"optimizer", optimizer->describe()},
       {"batch size", std::to_string(batch_size)},
       {"epochs", std::to_string(epochs)},
       {"backend", exe->name() + fmt::format(", {} threads", compute_threads())}},
      resume.empty() ? -1 : start.epoch);
  train::CheckpointCallback checkpointer(run.file(train::kCheckpointFileName), g, params,
                                         *optimizer, trainer, config.dump(), checkpoint_every);
  trainer.add_callback(&progress);
  trainer.add_callback(&recorder);
  trainer.add_callback(&checkpointer);
  if (profile_callback) trainer.add_callback(profile_callback.get());
  run.write_run_json("train", config, {{"status", "running"}});

  log::info("training {} ({} parameters) on {} ({} samples), {} epochs, batch {}, {} on {}",
            model.model, net.parameter_count(), data.describe(), train_idx.size(), epochs,
            batch_size, optimizer->describe(), exe->name());
  try {
    trainer.fit(train_loader, val_loader ? val_loader.get() : &test_loader);
  } catch (const train::NonFiniteLoss& e) {
    run.write_run_json("train", config, {{"status", "stopped: non-finite loss"}});
    fail("{}; {}", e.what(),
         checkpointer.written()
             ? fmt::format("the last good checkpoint is {}", checkpointer.path().string())
             : std::string("no checkpoint was written before it"));
  }
  train::PhaseMetrics test = val_loader ? trainer.evaluate(test_loader) : trainer.state().eval;
  if (profiler) {
    const prof::Profile profile = profiler->finish();
    ensure_writable_dir(run.file("profile"));
    prof::write_profile_files(profile, run.file("profile"),
                              fmt::format("telar train --profile: {}", model.model));
    if (!quiet) std::cerr << prof::format_table(profile, {40});
  }
  const auto& p = trainer.progress();
  double train_seconds = 0.0;
  for (double s : p.epoch_seconds) train_seconds += s;
  const std::int64_t per_epoch = limit_batches > 0
                                     ? std::min(limit_batches, train_loader.batches_per_epoch())
                                     : train_loader.batches_per_epoch();
  std::int64_t samples_total = 0;
  for (std::int64_t i = 0; i < per_epoch; ++i) samples_total += train_loader.batch_size_of(i);
  samples_total *= static_cast<std::int64_t>(p.epoch_seconds.size());
  const double samples_per_s =
      train_seconds > 0 ? static_cast<double>(samples_total) / train_seconds : 0.0;
  nlohmann::json result = {{"train", metrics_json(trainer.state().train)},
                           {"test", metrics_json(test)},
                           {"samples_per_s", samples_per_s},
                           {"epoch_seconds", p.epoch_seconds},
                           {"run_dir", run.path().string()}};
  if (val_loader) result["validation"] = metrics_json(trainer.state().eval);
  run.write_run_json("train", config, {{"status", "finished"}, {"result", result}});
  std::cout << fmt::format(
      "{}: test accuracy {:.4f} (loss {:.4f}), train accuracy {:.4f}, {:.1f} s training "
      "({:.0f} samples/s)\nrun directory: {} (report.html, metrics.csv, {})\n",
      model.model, test.accuracy, test.loss, trainer.state().train.accuracy, train_seconds,
      samples_per_s, run.path().string(), train::kCheckpointFileName);
  if (json) print_json(result);
  return 0;
}

}  // namespace telar::cli
