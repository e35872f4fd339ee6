#include "runs/dlrm_run.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <optional>

#include "backend/backend.hpp"
#include "backend/cpu/embedding_bag_kernels.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/log.hpp"
#include "core/progress.hpp"
#include "core/threads.hpp"
#include "dlrm/benchmark.hpp"
#include "dlrm/criteo.hpp"
#include "dlrm/executor.hpp"
#include "dlrm/runner.hpp"
#include "dlrm/sim_executor.hpp"
#include "dlrm/thesis.hpp"
#include "report/dlrm_report.hpp"
#include "report/dlrm_sim_report.hpp"
#include "report/html_report.hpp"
#include "report/run_dir.hpp"
#include "report/run_record.hpp"
#include "runs/dlrm_checkpoint.hpp"

namespace telar::runs {

namespace fs = std::filesystem;

namespace {

std::string mb(std::int64_t bytes) {
  return fmt::format("{:.1f} MB", static_cast<double>(bytes) / (1 << 20));
}

double max_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
}

nlohmann::json test_json(const dlrm::TestReport& t) {
  return {{"loss", t.loss},
          {"accuracy", t.accuracy},
          {"auc", number_or_null(t.auc)},
          {"samples", t.samples}};
}

struct Data {
  std::unique_ptr<dlrm::DataSource> train, test;
  std::int64_t skipped_lines = -1;
};

Data make_data(const DlrmSetup& f, const dlrm::DlrmConfig& config) {
  Data d;
  const dlrm::LookupOptions lookups{f.num_indices_per_lookup, f.num_indices_per_lookup_fixed};
  const std::int64_t test_batch =
      f.test_mini_batch_size > 0 ? f.test_mini_batch_size : f.mini_batch_size;
  if (!f.benchmark.empty()) {
    // A few full batches of random inputs, prepared before the timed calls.
    require(f.mini_batch_size > 0, "--mini-batch-size must be positive, got {}", f.mini_batch_size);
    d.train =
        dlrm::make_random_data(config, dlrm::BatchPlan{4 * f.mini_batch_size, f.mini_batch_size},
                               lookups, f.seed, f.round_targets);
  } else if (f.data_generation == "random") {
    d.train = dlrm::make_random_data(
        config, dlrm::BatchPlan::from_flags(f.data_size, f.num_batches, f.mini_batch_size), lookups,
        f.seed, f.round_targets);
  } else if (f.data_generation == "synthetic") {
    const auto plan = dlrm::BatchPlan::from_flags(f.data_size, f.num_batches, f.mini_batch_size);
    d.train = dlrm::make_synthetic_data(config, plan, lookups, f.seed, 0);
    require(f.test_data_size >= 0, "--test-data-size must not be negative, got {}",
            f.test_data_size);
    const std::int64_t test_samples =
        f.test_data_size > 0 ? f.test_data_size : std::max<std::int64_t>(1, plan.samples / 4);
    d.test = dlrm::make_synthetic_data(config, dlrm::BatchPlan{test_samples, test_batch}, lookups,
                                       f.seed, 1);
  } else if (f.data_generation == "dataset") {
    require(f.data_set == "kaggle" || f.data_set == "terabyte",
            "--data-set: '{}' is not a Criteo set; use kaggle or terabyte", f.data_set);
    require(f.test_fraction >= 0.0 && f.test_fraction < 1.0,
            "--test-fraction must be in [0, 1), got {}", f.test_fraction);
    require(f.mini_batch_size > 0, "--mini-batch-size must be positive, got {}", f.mini_batch_size);
    require(f.num_batches >= 0, "--num-batches must not be negative, got {}", f.num_batches);
    auto cache = dlrm::CriteoCache::open(
        config, {fs::path(f.raw_data_file), fs::path(f.processed_data_file), f.strict});
    const std::int64_t n = cache->records();
    const auto n_test =
        static_cast<std::int64_t>(std::floor(static_cast<double>(n) * f.test_fraction));
    std::int64_t n_train = n - n_test;
    require(n_train > 0, "{}: {} records leave none for training with --test-fraction {}",
            cache->stats().cache.string(), n, f.test_fraction);
    if (f.num_batches > 0) n_train = std::min(n_train, f.num_batches * f.mini_batch_size);
    d.train = dlrm::make_criteo_data(cache, 0, n_train, f.mini_batch_size, "train");
    if (n_test > 0) d.test = dlrm::make_criteo_data(cache, n - n_test, n_test, test_batch, "test");
    d.skipped_lines = cache->stats().skipped;
  } else {
    fail("--data-generation: '{}' is not supported; use random, synthetic or dataset",
         f.data_generation);
  }
  return d;
}

// File and directory names from workload names: "DLRM(1)" -> "DLRM1".
std::string file_safe(const std::string& name) {
  std::string out;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') out += c;
  return out.empty() ? "workload" : out;
}

// Where the embedding tables live: --storage (or `fallback` where it was not given), within
// --budget-mb, under --embedding-dir.
dlrm::StorageOptions storage_options(const DlrmSetup& f, const std::string& fallback) {
  dlrm::StorageOptions so;
  so.mode = f.storage_given ? f.storage : fallback;
  so.budget_bytes = static_cast<std::int64_t>(f.budget_mb * (1 << 20));
  so.dir = f.embedding_dir;
  return so;
}

// A run that fails leaves nothing half-written behind: the directory if it made it, else the
// files a DLRM run writes into one that was there (--overwrite).
void remove_partial_run(const fs::path& path, bool created) {
  std::error_code ec;
  if (created) {
    fs::remove_all(path, ec);
    return;
  }
  for (const char* name : {"run.json", "metrics.csv", "report.html", "components.csv", "nodes.csv"})
    fs::remove(path / name, ec);
  fs::remove_all(path / "stonne", ec);
}

// The run directory: --out, or a new one under runs/.
std::filesystem::path dlrm_run_path(const DlrmSetup& f) {
  return f.out.empty() ? report::default_run_path("dlrm") : std::filesystem::path(f.out);
}

}  // namespace

// --preset thesis: the thesis' workloads, one after another, on the hybrid accelerator.

nlohmann::json run_dlrm_preset(const DlrmSetup& f, std::ostream& out) {
  require(f.preset == "thesis", "--preset: '{}' is not a preset; use thesis", f.preset);
  const std::vector<dlrm::ThesisWorkload> workloads = dlrm::select_thesis_workloads(f.workloads);
  backend::sim::SimTarget target = dlrm::thesis_hybrid_target();
  std::string target_label = target.name;
  if (f.backend_given) {
    const backend::BackendSpec spec = backend::parse_backend_spec(f.backend);
    require(spec.kind == "sim",
            "--preset {} runs on a simulated accelerator: give --backend sim:HYBRID.toml or "
            "sim:CONFIG.cfg, or leave --backend out for the thesis' (Table 11)",
            f.preset);
    target = dlrm::load_sim_target(spec);
    target_label = spec.text;
  }
  const dlrm::StorageOptions so = storage_options(f, "procedural");
  for (const auto& w : workloads) dlrm::choose_storage(w.config(), so);  // checks the mode

  const fs::path run_path = dlrm_run_path(f);
  const bool created = !fs::exists(run_path);
  report::RunDirectory run(run_path, report::reuse_for(f.overwrite));
  nlohmann::json result;
  try {
    nlohmann::json wl = nlohmann::json::array();
    for (const auto& w : workloads)
      wl.push_back({{"name", w.name}, {"group", w.group}, {"flags", w.flags()}});
    nlohmann::json cfg = {
        {"preset", f.preset},           {"workloads", wl},
        {"backend", target_label},      {"accelerators", dlrm::describe_target(target)},
        {"embedding_storage", so.mode}, {"seed", f.seed},
        {"threads", compute_threads()}, {"stonne_files", f.stonne_files}};
    report::RunRecord record(run, "dlrm", cfg);
    log::info("{} thesis workload{} on {}: {}", workloads.size(), workloads.size() == 1 ? "" : "s",
              target_label, dlrm::describe_target(target));

    Stopwatch total;
    std::vector<report::DlrmSimulation> sims;
    {
      ProgressBar bar("thesis workloads", static_cast<std::int64_t>(workloads.size()));
      for (std::size_t i = 0; i < workloads.size(); ++i) {
        const dlrm::ThesisWorkload& w = workloads[i];
        bar.update(static_cast<std::int64_t>(i), w.name);
        Stopwatch sw;
        const dlrm::DlrmConfig config = w.config();
        dlrm::DlrmModel model(config, dlrm::choose_storage(config, so), f.seed, so.dir);
        dlrm::ExecutorOptions eo;
        eo.seed = f.seed;
        backend::sim::SimOptions sim;
        if (f.stonne_files) sim.stats_dir = run.file("stonne") / file_safe(w.name);
        auto exe = dlrm::make_sim_executor(model, target, target_label, eo, sim);
        auto data = dlrm::make_random_data(
            config, dlrm::BatchPlan{w.data_size, dlrm::ThesisWorkload::kMiniBatch},
            dlrm::LookupOptions{w.lookups, false}, f.seed);
        dlrm::RunOptions ro;
        ro.inference_only = true;
        ro.print_freq = data->batches();
        const dlrm::RunSummary s = dlrm::run_dlrm(*exe, *data, nullptr, ro);
        sims.push_back(
            {w.name, w.group, w.flags(), w.thesis_eb_share, *s.simulation, sw.seconds()});
      }
      bar.finish();
    }
    const double seconds = total.seconds();

    if (sims.size() == 1) {
      out << fmt::format("{} ({}) on {}:\n  {}\n", sims[0].name, sims[0].group,
                         sims[0].sim.accelerators, sims[0].flags)
          << report::component_table(sims[0].sim);
      if (!sims[0].thesis_eb_share.empty())
        out << fmt::format("The thesis: EmbeddingBags take {} of the cycles.\n",
                           sims[0].thesis_eb_share);
    } else {
      out << fmt::format("The thesis' workloads on {} ({}):\n", target_label,
                         dlrm::describe_target(target))
          << report::workload_table(sims);
    }
    report::write_components_csv(run.file("components.csv"), sims);
    report::write_nodes_csv(run.file("nodes.csv"), sims);
    report::HtmlReport html("telar dlrm --preset " + f.preset);
    html.key_values({{"accelerator", target_label},
                     {"engines", dlrm::describe_target(target)},
                     {"workloads", std::to_string(sims.size())},
                     {"embedding storage", so.mode},
                     {"seed", std::to_string(f.seed)},
                     {"wall seconds", fmt::format("{:.1f}", seconds)},
                     {"peak RSS", fmt::format("{:.0f} MB", max_rss_mb())}});
    report::add_simulation_section(html, sims);
    html.write(run.file("report.html"));

    nlohmann::json results = nlohmann::json::array();
    for (const auto& r : sims) {
      nlohmann::json j = report::simulation_json(r.sim);
      j["name"] = r.name;
      j["group"] = r.group;
      j["thesis_eb_share"] = r.thesis_eb_share;
      j["seconds"] = r.seconds;
      results.push_back(j);
    }
    result = {{"preset", f.preset}, {"backend", target_label},    {"workloads", results},
              {"seconds", seconds}, {"max_rss_mb", max_rss_mb()}, {"run_dir", run.path().string()}};
    record.finish(result);
    out << fmt::format("run directory: {} (report.html, components.csv, nodes.csv)\n",
                       run.path().string());
  } catch (const std::exception&) {  // bad input, or out of memory
    remove_partial_run(run_path, created);
    throw;
  }
  return result;
}

nlohmann::json run_dlrm_model(DlrmSetup f, std::ostream& out) {
  // Everything that can fail on bad input happens before the run directory exists.
  if (f.data_generation == "dataset" && f.embedding_size.find('-') == std::string::npos) {
    // One size for all of Criteo's 26 tables.
    std::string sizes = f.embedding_size;
    for (int t = 1; t < dlrm::kCriteoSparse; ++t) sizes += "-" + f.embedding_size;
    f.embedding_size = sizes;
  }
  dlrm::DlrmConfig config = dlrm::make_config(f.sparse_feature_size, f.embedding_size, f.mlp_bot,
                                              f.mlp_top, f.interaction_op, f.interaction_itself);
  const dlrm::LossFunction loss = dlrm::parse_loss_function(f.loss_function);
  require(f.nepochs > 0, "--nepochs must be positive, got {}", f.nepochs);
  require(f.print_freq > 0, "--print-freq must be positive, got {}", f.print_freq);
  require(std::isfinite(f.learning_rate) && f.learning_rate > 0,
          "--learning-rate must be a positive number, got {}", f.learning_rate);
  require(f.budget_mb >= 0, "--embedding-budget-mb must not be negative, got {}", f.budget_mb);
  require(f.benchmark.empty() || f.benchmark == "inference" || f.benchmark == "embedding-bag",
          "--benchmark: '{}' is not a benchmark; use inference or embedding-bag", f.benchmark);
  if (!f.benchmark.empty())
    require(f.data_generation == "random",
            "--benchmark runs on random inputs; drop --data-generation {}", f.data_generation);
  if (!f.embedding_dir.empty())
    require(fs::is_directory(f.embedding_dir), "--embedding-dir '{}' is not a directory",
            f.embedding_dir);
  const backend::BackendSpec spec = backend::parse_backend_spec(f.backend);
  require(spec.kind == "cpu" || spec.kind == "sim",
          "--backend {}: DLRM runs on cpu or on a simulated accelerator (sim:CONFIG.cfg or "
          "sim:HYBRID.toml)",
          f.backend);
  std::optional<backend::sim::SimTarget> target;
  if (spec.kind == "sim") {
    require(f.benchmark.empty(),
            "--benchmark times the CPU; drop --backend {} (the simulator counts cycles)",
            f.backend);
    target = dlrm::load_sim_target(spec);
  } else {
    require(!f.stonne_files, "--stonne-files needs --backend sim:...");
  }

  dlrm::DlrmConfig model_config = config;
  if (f.benchmark == "embedding-bag") model_config.table_rows.resize(1);
  const dlrm::StorageOptions so = storage_options(f, f.storage);
  const dlrm::StorageKind storage = dlrm::choose_storage(model_config, so);
  Data data = make_data(f, model_config);

  const bool resuming = !f.resume.empty();
  const fs::path run_path = resuming ? fs::path(f.resume) : dlrm_run_path(f);
  if (resuming) {
    require(!f.inference_only && f.benchmark.empty(),
            "--resume {}: only a training run can be resumed", f.resume);
    require(fs::exists(run_path / kDlrmCheckpointFileName),
            "--resume {}: no checkpoint there; a DLRM training writes one when Ctrl-C or "
            "SIGTERM stops it (a finished run has none)",
            f.resume);
  }
  const bool created = !fs::exists(run_path);
  report::RunDirectory run(run_path,
                           resuming ? report::RunReuse::Continue : report::reuse_for(f.overwrite));
  const bool training = f.benchmark.empty() && !f.inference_only;
  // Ctrl-C or SIGTERM stops a training after the batch in progress, with a checkpoint there.
  std::optional<StopOnSignal> stop_on_signal;
  if (training) stop_on_signal.emplace();
  nlohmann::json result;
  try {
    dlrm::DlrmModel model(model_config, storage, f.seed, so.dir);
    dlrm::ExecutorOptions eo;
    eo.loss = loss;
    eo.seed = f.seed;
    backend::sim::SimOptions sim;
    if (f.stonne_files) sim.stats_dir = run.file("stonne");
    auto exe = target ? dlrm::make_sim_executor(model, *target, spec.text, eo, sim)
                      : dlrm::make_executor(model, f.backend, eo);
    const std::string mode = !f.benchmark.empty() ? "benchmark"
                             : f.inference_only   ? "inference"
                                                  : "train";
    nlohmann::json cfg = {{"arch_sparse_feature_size", config.embedding_dim},
                          {"arch_embedding_size", config.table_rows},
                          {"arch_mlp_bot", config.bottom},
                          {"arch_mlp_top", config.top},
                          {"top_layers", config.top_layers()},
                          {"arch_interaction_op", dlrm::interaction_op_name(config.interaction)},
                          {"arch_interaction_itself", config.interaction_itself},
                          {"data", data.train->describe()},
                          {"test_data", data.test ? data.test->describe() : ""},
                          {"mini_batch_size", f.mini_batch_size},
                          {"num_indices_per_lookup", f.num_indices_per_lookup},
                          {"num_indices_per_lookup_fixed", f.num_indices_per_lookup_fixed},
                          {"loss_function", dlrm::loss_function_name(loss)},
                          {"learning_rate", f.learning_rate},
                          {"nepochs", f.nepochs},
                          {"mode", mode},
                          {"benchmark", f.benchmark},
                          {"backend", exe->name()},
                          {"threads", compute_threads()},
                          {"embedding_storage", dlrm::storage_name(storage)},
                          {"embedding_bag_isa", backend::cpu::embedding_bag_isa()},
                          {"table_bytes", model_config.table_bytes()},
                          {"seed", f.seed},
                          {"options", f.options}};
    dlrm::RunPosition start;
    if (resuming) {
      start = load_dlrm_checkpoint(run.file(kDlrmCheckpointFileName), model, *exe);
      log::info("resuming {} at epoch {} batch {}", f.resume, start.epoch + 1, start.next_batch);
    }
    report::RunRecord record(run, "dlrm", cfg);

    const std::string summary = config.summary();
    out << summary;
    log::info("{} on {} ({} threads); tables: {} ({} of fp32, {} held); data: {}", mode,
              exe->name(), compute_threads(), dlrm::storage_name(storage),
              mb(model_config.table_bytes()), mb(model.tables.held_bytes()),
              data.train->describe());
    report::DlrmRecorder recorder(
        run, "telar dlrm",
        {{"mode", mode},
         {"backend", fmt::format("{}, {} threads", exe->name(), compute_threads())},
         {"tables",
          fmt::format("{} x {} ({} storage, {})", model_config.tables(), config.embedding_dim,
                      dlrm::storage_name(storage), mb(model_config.table_bytes()))},
         {"data", data.train->describe()},
         {"loss", std::string(dlrm::loss_function_name(loss))},
         {"learning rate", fmt::format("{}", f.learning_rate)}},
        summary, resuming);

    result = {{"mode", mode},
              {"backend", exe->name()},
              {"threads", compute_threads()},
              {"embedding_storage", dlrm::storage_name(storage)},
              {"table_bytes", model_config.table_bytes()},
              {"top_layers", config.top_layers()},
              {"run_dir", run.path().string()}};
    if (data.skipped_lines >= 0) result["skipped_lines"] = data.skipped_lines;

    if (!f.benchmark.empty()) {
      dlrm::BenchmarkOptions bo;
      bo.warmup = f.warmup;
      bo.repeats = f.repeats;
      const dlrm::BenchmarkResult b =
          f.benchmark == "inference"
              ? dlrm::benchmark_inference(*exe, *data.train, bo)
              : dlrm::benchmark_embedding_bag(model.tables[0], *data.train, bo);
      recorder.finish(nullptr, &b);
      result["benchmark"] = b.benchmark;
      result["seconds_median"] = b.seconds_median;
      result["seconds_min"] = b.seconds_min;
      result["samples_per_s"] = b.samples_per_s;
      result["samples_per_s_best"] = b.samples_per_s_best;
      result["lookups_per_call"] = b.lookups_per_call;
      if (f.benchmark == "embedding-bag") {
        result["effective_gb_per_s"] = b.effective_gb_per_s;
        result["effective_gb_per_s_best"] = b.effective_gb_per_s_best;
      }
      out << fmt::format(
          "{}: median {:.3f} ms (fastest {:.3f} ms) per batch of {}, {:.0f} samples/s{}\n",
          b.benchmark, b.seconds_median * 1e3, b.seconds_min * 1e3, f.mini_batch_size,
          b.samples_per_s,
          f.benchmark == "embedding-bag" ? fmt::format(", {:.2f} GB/s effective ({:.0f} lookups)",
                                                       b.effective_gb_per_s, b.lookups_per_call)
                                         : "");
    } else {
      dlrm::RunOptions ro;
      ro.epochs = f.nepochs;
      ro.learning_rate = static_cast<float>(f.learning_rate);
      ro.inference_only = f.inference_only;
      ro.print_freq = f.print_freq;
      ro.test_freq = f.test_freq;
      ro.start = start;
      const char* kind = f.inference_only ? "inference" : "training";
      dlrm::RunCallbacks cb;
      cb.on_interval = [&](const dlrm::IntervalReport& r) {
        recorder.on_interval(r);
        if (!f.quiet)
          out << fmt::format(
              "Finished {} it {}/{} of epoch {}, {:.2f} ms/it, loss {:.6f}, accuracy {:3.3f} %\n",
              kind, r.batch, r.batches, r.epoch, r.ms_per_batch, r.loss, r.accuracy * 100);
      };
      cb.on_test = [&](const dlrm::TestReport& r) {
        recorder.on_test(r);
        if (!f.quiet)
          out << fmt::format(
              "Testing at - {}/{} of epoch {}, loss {:.6f}, accuracy {:3.3f} %, best {:3.3f} %{}\n",
              r.batch, r.batches, r.epoch, r.loss, r.accuracy * 100, r.best_accuracy * 100,
              std::isfinite(r.auc) ? fmt::format(", auc {:.4f}", r.auc) : "");
      };
      cb.on_interrupt = [&](const dlrm::RunPosition& at) {
        save_dlrm_checkpoint(run.file(kDlrmCheckpointFileName), model, *exe, at);
        recorder.write_metrics();
        record.interrupt({{"signal", signal_name(stop_signal())},
                          {"epoch", at.epoch + 1},
                          {"next_batch", at.next_batch},
                          {"batches_done", at.batches}});
      };
      if (!f.quiet) out << "time/loss/accuracy (if enabled):\n";
      const dlrm::RunSummary s = [&] {
        try {
          return dlrm::run_dlrm(*exe, *data.train, data.test.get(), ro, cb);
        } catch (const Interrupted& e) {
          throw Interrupted(fmt::format("{}; the checkpoint is saved: continue with `telar dlrm "
                                        "--resume {}`",
                                        e.what(), run.path().string()),
                            e.signal);
        }
      }();
      recorder.finish(&s, nullptr);
      // The run is whole: a checkpoint of a moment inside it would only mislead a --resume.
      std::error_code ec;
      fs::remove(run.file(kDlrmCheckpointFileName), ec);
      result["train"] = {{"loss", s.loss},
                         {"accuracy", s.accuracy},
                         {"samples", s.samples},
                         {"batches", s.batches}};
      if (s.test) result["test"] = test_json(*s.test);
      result["samples_per_s"] = s.samples_per_s();
      result["compute_seconds"] = s.compute_seconds;
      result["wall_seconds"] = s.wall_seconds;
      nlohmann::json comps = nlohmann::json::object();
      for (int c = 0; c < dlrm::kComponents; ++c)
        comps[std::string(dlrm::component_name(static_cast<dlrm::Component>(c)))] =
            s.times.seconds[static_cast<std::size_t>(c)];
      result["component_seconds"] = comps;
      if (s.simulation) {
        const std::vector<report::DlrmSimulation> sims = {
            {"run", "", "", "", *s.simulation, s.wall_seconds}};
        out << fmt::format("On {} ({}):\n", s.simulation->target, s.simulation->accelerators)
            << report::component_table(*s.simulation);
        report::write_components_csv(run.file("components.csv"), sims);
        report::write_nodes_csv(run.file("nodes.csv"), sims);
        result["simulation"] = report::simulation_json(*s.simulation);
      }
      out << fmt::format(
          "{}: {} samples in {:.2f} s ({:.0f} samples/s), loss {:.6f}{}\n", kind, s.samples,
          s.compute_seconds, s.samples_per_s(), s.loss,
          s.test ? fmt::format(
                       ", test accuracy {:.4f}{}", s.test->accuracy,
                       std::isfinite(s.test->auc) ? fmt::format(" auc {:.4f}", s.test->auc) : "")
                 : "");
    }
    result["held_table_bytes"] = model.tables.held_bytes();
    result["max_rss_mb"] = max_rss_mb();
    record.finish(result);
    out << fmt::format("run directory: {} (report.html, metrics.csv{})\n", run.path().string(),
                       target ? ", components.csv, nodes.csv" : "");
  } catch (const Interrupted&) {
    throw;  // stopped cleanly: the checkpoint and run.json stay for --resume
  } catch (const std::exception&) {  // bad input, or out of memory
    // A resumed run keeps what it had; its run.json says why it failed.
    if (!resuming) remove_partial_run(run_path, created);
    throw;
  }
  return result;
}

}  // namespace telar::runs
