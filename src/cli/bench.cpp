// telar bench: latency and throughput of a model on one or more targets, as a deployment
// comparison measures them (docs/bench.md): warm-up by time, timed runs for a duration and a
// number of iterations, the distribution of the latencies, and the environment they came from.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <optional>

#include "backend/cpu/cpu_backend.hpp"
#include "backend/inference.hpp"
#include "backend/measure.hpp"
#include "backend/sim/sim_backend.hpp"
#include "cli/bench_report.hpp"
#include "cli/bench_target.hpp"
#include "cli/data_options.hpp"
#include "cli/model_options.hpp"
#include "cli/trained_model.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/memory.hpp"
#include "core/parse.hpp"
#include "core/system_load.hpp"
#include "core/threads.hpp"
#include "graph/op.hpp"
#include "report/run_dir.hpp"

namespace telar::cli {

namespace {

// The coefficient of variation above which a latency is not to be trusted.
constexpr double kNoisyCv = 0.02;
// The largest batch --batch-sweep tries.
constexpr std::int64_t kMaxSweepBatch = 1 << 16;

// Milliseconds with the digits that matter from microseconds (simulated layers) to seconds.
std::string ms_text(double ms) {
  return fmt::format("{:.{}f}", ms, ms < 0.01 ? 6 : ms < 1 ? 4 : 3);
}

std::string mib(std::int64_t bytes) {
  const double b = static_cast<double>(bytes);
  return b < 1024.0 * 1024.0 ? fmt::format("{:.0f} KiB", b / 1024.0)
                             : fmt::format("{:.0f} MiB", b / (1024.0 * 1024.0));
}

// Whether a sweep's next size (2 x `batch`) fits `limit`. Bounded by what this size's plan
// held where the target tells (`planned`; the model's estimates miss layout copies, the
// kernels' weights and scratch space, and count values that fusion removed): what grew from
// the previous size (`last_planned`) doubles, at least the growth of the activations alive at
// once. Elsewhere by the estimate of a buffer per value. Says why where it stops.
bool next_size_fits(const graph::Graph& g, std::int64_t batch, std::optional<std::int64_t> planned,
                    std::optional<std::int64_t> last_planned, std::int64_t limit,
                    const std::string& label) {
  if (!planned) return backend::inference_memory_bytes(g, 2 * batch) <= limit;
  if (*planned > limit) {  // a size's kernels can choose layouts no estimate foresaw
    std::cout << fmt::format(
        "{}: batch {}'s plan held {}, more than the {} limit; the sweep stops here\n", label, batch,
        mib(*planned), mib(limit));
    return false;
  }
  // The estimate's growth as a floor: the measured one can be flat where a size's plan held
  // less than usual (the CPU's thread choice keeps a second plan for small batches only).
  const std::int64_t estimated =
      backend::inference_peak_bytes(g, 2 * batch) - backend::inference_peak_bytes(g, batch);
  const std::int64_t growth =
      std::max(estimated, last_planned ? 2 * (*planned - *last_planned) : std::int64_t{0});
  if (*planned + growth <= limit) return true;
  std::cout << fmt::format(
      "{}: batch {} would hold about {} (batch {}'s plan held {}), more than the {} limit; the "
      "sweep stops here\n",
      label, 2 * batch, mib(*planned + growth), batch, mib(*planned), mib(limit));
  return false;
}

// The `count` nodes of a point that take longest, and its time by op.
void print_layers(const BenchPoint& p, int count) {
  const double sum = layers_ms(p);
  const std::vector<backend::NodeTime> longest = longest_nodes(p, static_cast<std::size_t>(count));
  std::vector<std::string> shares;
  for (const auto& [op, ms] : time_by_op(p))
    shares.push_back(fmt::format("{} {:.0f}%", op, sum > 0.0 ? 100.0 * ms / sum : 0.0));
  std::cout << fmt::format(
      "  where {} batch {}'s time goes ({} nodes, {} ms in all, mean of {} runs timed node by "
      "node)\n  by op: {}\n",
      bench_label(p), p.batch, p.layers.size(), ms_text(sum), p.layer_runs,
      fmt::join(shares, ", "));
  std::size_t width = 4;
  for (const auto& t : longest) width = std::max(width, t.node.size());
  std::cout << fmt::format("  {:>10} {:>6}  {:<{}}  {}\n", "ms", "share", "node", width, "op");
  for (const auto& t : longest)
    std::cout << fmt::format("  {:>10} {:>5.1f}%  {:<{}}  {} {}\n", ms_text(t.ms),
                             sum > 0.0 ? 100.0 * t.ms / sum : 0.0, t.node, width,
                             graph::op_name(t.kind), t.detail);
}

}  // namespace

int run_bench(const Args& args) {
  CLI::App app{
      "Latency and throughput of a model on one or more targets: warm-up by time, "
      "timed runs for a duration, the latency distribution, report.html.",
      "bench"};
  ModelOptions model;
  model.add_to(app, "", /*required=*/false);
  std::string checkpoint;
  bool accuracy = false;
  DataOptions data;
  app.add_option("--checkpoint", checkpoint,
                 "bench a model trained by telar train, with its weights (its run directory or "
                 "checkpoint file), instead of --model");
  app.add_flag("--accuracy", accuracy,
               "also each target's and precision's accuracy on the --data test set (needs "
               "--checkpoint)");
  data.add_to(app, /*validation=*/false);
  std::vector<std::string> target_texts;
  std::vector<std::string> precision_texts;  // default: fp32 (and int8 for a quantized model)
  std::string batch_list = "1", max_memory, out;
  bool sweep = false, json = false, overwrite = false, no_optimize = false;
  backend::MeasureOptions measure_options;
  double clock_ghz = 1.0;
  int threads = 0;
  int layers = 0;
  std::uint64_t seed = 0;
  app.add_option("--target", target_texts,
                 "where to run, repeatable or comma-separated: cpu, cpu:ref, cpu:threads=N, "
                 "cuda:N, sim:CFG (default cpu)")
      ->delimiter(',');
  app.add_option(
         "--precision", precision_texts,
         "fp32, bf16 (convolutions and Linear on oneDNN's bf16 primitives; needs "
         "avx512_bf16 or AMX), int8 (a model quantized by telar quantize), comma-separated: "
         "each target at each (default fp32; fp32,int8 for a quantized model)")
      ->delimiter(',');
  app.add_option("--batch", batch_list, "batch sizes, comma-separated (default 1: latency)");
  app.add_flag("--batch-sweep", sweep,
               "batch 1, 2, 4 ... doubling while the plan fits --max-memory (throughput)");
  app.add_option("--max-memory", max_memory,
                 "memory the sweep's largest plan may take, e.g. 4G (default: 80% of what is "
                 "available)");
  app.add_option("--duration", measure_options.duration_seconds,
                 "timed runs last at least this many seconds per point")
      ->check(positive_real(true));
  app.add_option("--warmup", measure_options.warmup_seconds,
                 "untimed runs for this many seconds first (at least one)")
      ->check(positive_real(true));
  app.add_option("--min-iterations", measure_options.min_iterations,
                 "timed runs per point, at least")
      ->check(at_least(1));
  app.add_option("--clock-ghz", clock_ghz, "sim targets: cycles become time at this clock")
      ->check(positive_real());
  app.add_option("--seed", seed, "seed for the random weights and input")->check(at_least(0));
  app.add_option("--out", out, "write run.json, bench.csv, latency.csv and report.html here");
  add_overwrite_flag(app, &overwrite);
  add_no_optimize_flag(app, &no_optimize);
  add_threads_option(app, &threads);
  app.add_option("--layers", layers,
                 "also time each node (a clock around it) and print the N that take longest, "
                 "with the time by op; every node in layers.csv and report.html with --out "
                 "(cpu targets)")
      ->check(at_least(0));
  app.add_flag("--json", json, "print the result as one JSON object on the last line");
  int code = 0;
  if (!parse(app, args, "bench", &code)) return code;
  apply_threads(threads);
  if (target_texts.empty()) target_texts = {"cpu"};
  require(!sweep || batch_list == "1",
          "--batch-sweep chooses the batch sizes itself; give --batch or --batch-sweep, not both");
  require(sweep || max_memory.empty(), "--max-memory bounds --batch-sweep; add --batch-sweep");

  if (!checkpoint.empty()) model.refuse_beside_checkpoint();
  require(model.model.empty() != checkpoint.empty(),
          "give the model to bench: --model NAME|FILE.onnx, or --checkpoint RUN for a model "
          "trained by telar train (one of them)");
  require(accuracy || (!data.given() && data.fit.empty()),
          "--data, its files and --fit are the test set of --accuracy; add --accuracy or leave "
          "them out");
  require(!accuracy || !checkpoint.empty(),
          "--accuracy needs a trained model: give --checkpoint RUN (from telar train) instead of "
          "--model");
  graph::Graph g;
  graph::ParameterSet params;
  std::optional<TrainedModel> trained;
  std::string model_name = model.model;
  if (checkpoint.empty()) {
    LoadedModel loaded = model.load(seed);
    g = std::move(loaded.graph);
    params = std::move(loaded.weights);
  } else {
    trained.emplace(load_trained_model(checkpoint, "--checkpoint"));
    g = trained->net;
    params = trained->weights;
    model_name = fmt::format("{} ({})", g.name(), checkpoint);
  }
  require(g.inputs().size() == 1, "model '{}' takes {} inputs; telar bench feeds one input batch",
          model_name, g.inputs().size());
  const Shape& declared = g.value(g.inputs()[0]).shape;
  require(!declared.empty() && declared[0] == kBatchDim,
          "model '{}': its input has no batch dimension to bench", model_name);

  // The batch sizes, and for a sweep the memory that bounds it, before anything runs (a sweep
  // starts at batch 1 and doubles as it goes, below).
  std::vector<std::int64_t> batches;
  std::int64_t limit = 0;
  if (sweep) {
    const std::int64_t available = available_memory_bytes().value_or(0);
    limit = max_memory.empty() ? available * 8 / 10 : parse_bytes(max_memory, "--max-memory");
    require(limit > 0,
            "--batch-sweep: the memory available is unknown here; give --max-memory (e.g. 4G)");
    const std::int64_t one = backend::inference_peak_bytes(g, 1);
    require(one <= limit,
            "--batch-sweep: batch 1 of '{}' needs {} and the limit is {}; raise --max-memory",
            model_name, mib(one), mib(limit));
    batches = {1};
  } else {
    batches = parse_int_list(batch_list, ',', "--batch");  // refuses sizes below 1
    // A size whose plan cannot fit in the memory there is would only run out of it mid-run.
    // (Activations grow with the batch, the weights do not: extrapolated from batches 1 and 2
    // in floating point, which no batch size overflows.)
    if (const auto available = available_memory_bytes()) {
      const double one = static_cast<double>(backend::inference_peak_bytes(g, 1));
      const double per_sample = static_cast<double>(backend::inference_peak_bytes(g, 2)) - one;
      for (const std::int64_t b : batches) {
        const double needs = one + static_cast<double>(b - 1) * per_sample;
        require(needs <= static_cast<double>(*available),
                "--batch {}: '{}' would need about {} at that batch, more than the {} of memory "
                "available; give a smaller --batch, or --batch-sweep to find the largest that "
                "fits",
                b, model_name, mib(static_cast<std::int64_t>(std::min(needs, 9e18))),
                mib(*available));
      }
    }
  }

  // Every target compiled (and so checked) before the run directory is made. A quantized
  // model is benched at int8 too by default, where the target runs int8 (the cpu on oneDNN).
  const bool int8_by_default =
      precision_texts.empty() && trained && trained->quantization != nullptr;
  if (precision_texts.empty())
    precision_texts = int8_by_default ? std::vector<std::string>{"fp32", "int8"}
                                      : std::vector<std::string>{"fp32"};
  std::vector<backend::Precision> precisions;
  for (const std::string& text : precision_texts)
    precisions.push_back(backend::parse_precision(text, "--precision"));
  std::vector<BenchTarget> targets;
  for (const std::string& text : target_texts)
    for (const backend::Precision precision : precisions) {
      if (int8_by_default && precision == backend::Precision::INT8 &&
          !backend::runs_int8(backend::parse_backend_spec(text)))
        continue;
      targets.push_back(compile_target(text, precision, g, params, !no_optimize,
                                       trained ? trained->quantization : nullptr));
    }
  // The test set is read before anything is written too.
  std::optional<train::Dataset> test_set;
  if (accuracy)
    test_set.emplace(data.fitted_for(
        data.load_test(trained->config.value("seed", std::uint64_t{0}), trained->config),
        trained->net, trained->config));
  std::optional<report::RunDirectory> run;
  if (!out.empty()) run.emplace(out, report::reuse_for(overwrite));
  if (accuracy)
    for (BenchTarget& t : targets)
      if (t.spec.kind != "sim")  // its values are the cpu's
        t.accuracy = test_accuracy(*trained, *test_set, t.spec, t.precision, trained->quantization,
                                   !no_optimize);

  nlohmann::json environment = report::machine_info();
  environment["isa"] = backend::cpu::dispatched_isa();
  environment["threads"] = compute_threads();
  for (const char* var : {"OMP_PROC_BIND", "OMP_PLACES", "OMP_WAIT_POLICY"})
    if (const char* v = std::getenv(var)) environment[var] = v;
  if (const auto load = load_average()) environment["load_average_before"] = *load;

  std::cout << fmt::format("{} ({}), {} threads, load {}\n", model_name,
                           no_optimize ? "as built" : "compiled for inference", compute_threads(),
                           environment.value("load_average_before", -1.0));
  std::size_t width = 12;
  for (const BenchTarget& t : targets)
    width = std::max(width, t.text.size() + (t.precision == backend::Precision::FP32 ? 0 : 5));
  std::cout << fmt::format("{:<{}} {:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7} {:>12}{}\n",
                           "target", width, "batch", "runs", "median ms", "mean ms", "p90 ms",
                           "p99 ms", "min ms", "CV", "samples/s", accuracy ? "  accuracy" : "");
  std::vector<BenchPoint> points;
  for (BenchTarget& t : targets) {
    std::optional<std::int64_t> last_planned;  // what the previous size's plan held
    std::vector<std::int64_t> sizes = batches;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const std::int64_t b = sizes[k];
      const Tensor x = random_input(declared, b, seed);
      BenchPoint p = measure_target(t, x, b, measure_options, clock_ghz);
      const std::optional<std::int64_t> planned = t.exe->planned_bytes();
      p.planned_bytes = planned;
      // One batch size's plan at a time: a sweep's memory bound is the largest plan's.
      t.exe->release_plans();
      const SampleSummary& s = p.latency;
      std::cout << fmt::format(
          "{:<{}} {:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>6.1f}% {:>12.1f}{}\n",
          bench_label(p), width, b, s.count, ms_text(s.median), ms_text(s.mean), ms_text(s.p90),
          ms_text(s.p99), ms_text(s.min), 100.0 * s.cv, p.samples_per_s,
          (p.accuracy ? fmt::format("  {:>8.4f}", *p.accuracy) : std::string()) +
              (p.simulated
                   ? fmt::format("  (simulated: {} cycles at {} GHz, {} host nodes not timed)",
                                 p.cycles, clock_ghz, p.host_nodes)
                   : std::string()));
      std::cout.flush();
      if (!p.simulated && s.cv > kNoisyCv)
        std::cerr << fmt::format(
            "warning: {} batch {}: the runs vary by {:.1f}% (coefficient of variation above "
            "{:.0f}%; load average {:.2f}, this benchmark's {} threads included): other work "
            "on the machine disturbs it; do not trust this figure, measure on a quiet machine\n",
            bench_label(p), b, 100.0 * s.cv, 100.0 * kNoisyCv, load_average().value_or(-1.0),
            compute_threads());
      if (layers > 0 && t.spec.kind == "cpu") {
        p.layer_runs = std::clamp(static_cast<int>(s.count), 3, 30);
        p.layers = backend::node_times(*t.exe, std::span<const Tensor>(&x, 1), p.layer_runs);
        print_layers(p, layers);
        t.exe->release_plans();
      } else if (layers > 0) {
        std::cout << fmt::format("  (--layers: {} is not timed node by node; cpu targets are)\n",
                                 bench_label(p));
      }
      points.push_back(std::move(p));
      if (sweep && 2 * b <= kMaxSweepBatch &&
          next_size_fits(g, b, planned, last_planned, limit, bench_label(points.back())))
        sizes.push_back(2 * b);
      last_planned = planned;
    }
  }
  if (const auto load = load_average()) environment["load_average_after"] = *load;

  nlohmann::json results = nlohmann::json::array();
  for (const BenchPoint& p : points) results.push_back(bench_point_json(p));
  const nlohmann::json result = {{"model", model_name},
                                 {"optimized", !no_optimize},
                                 {"threads", compute_threads()},
                                 {"points", results},
                                 {"environment", environment}};
  if (run) {
    write_file_atomic(run->file("bench.csv"), bench_summary_csv(points));
    write_file_atomic(run->file("latency.csv"), bench_latency_csv(points));
    if (layers > 0) write_file_atomic(run->file("layers.csv"), bench_layers_csv(points));
    write_bench_report(run->file("report.html"), "telar bench: " + model_name, points, environment);
    run->write_run_json("bench",
                        {{"model", model_name},
                         {"checkpoint", checkpoint},
                         {"accuracy", accuracy},
                         {"targets", target_texts},
                         {"precisions", precision_texts},
                         {"batches", sweep ? nlohmann::json("sweep") : nlohmann::json(batches)},
                         {"optimized", !no_optimize},
                         {"duration_s", measure_options.duration_seconds},
                         {"warmup_s", measure_options.warmup_seconds},
                         {"min_iterations", measure_options.min_iterations},
                         {"clock_ghz", clock_ghz},
                         {"layers", layers}},
                        {{"result", result}});
    std::cout << "wrote " << run->path().string() << "/{run.json, bench.csv, latency.csv, "
              << (layers > 0 ? "layers.csv, " : "") << "report.html}\n";
  }
  if (json) print_json(result);
  return 0;
}

}  // namespace telar::cli
