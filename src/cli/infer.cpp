// telar infer: inference latency and throughput of a model at a batch size (warm-up
// excluded, median of repeats).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <optional>

#include "backend/inference.hpp"
#include "backend/measure.hpp"
#include "cli/model_options.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/npy.hpp"
#include "core/statistics.hpp"
#include "core/threads.hpp"
#include "graph/parameters.hpp"
#include "report/run_dir.hpp"

namespace telar::cli {

int run_infer(const Args& args) {
  CLI::App app{"Measure inference latency and throughput of a model at a batch size "
               "(warm-up excluded, median of repeats).",
               "infer"};
  ModelOptions model;
  model.add_to(app);
  std::int64_t batch = 1;
  int warmup = 5, repeats = 30, threads = 0;
  std::string backend_name = "cpu", out, inputs_file, outputs_file, precision = "fp32";
  bool json = false, overwrite = false, no_optimize = false;
  std::uint64_t seed = 0;
  app.add_option("--batch", batch, "batch size")->check(at_least(1));
  app.add_option("--warmup", warmup, "untimed runs first")->check(at_least(0));
  app.add_option("--repeats", repeats, "timed runs")->check(at_least(1));
  app.add_option("--backend", backend_name,
                 "backend: cpu, cpu:ref, cpu:threads=N, cuda:N (docs/cuda.md)");
  app.add_option("--seed", seed, "seed for the random weights and input")->check(at_least(0));
  app.add_option("--inputs", inputs_file,
                 "run on this NumPy .npy input (float32, batch first) instead of a random one; "
                 "its first dimension is the batch (and its others an ONNX file's dynamic size, "
                 "without --input)");
  app.add_option("--outputs", outputs_file,
                 "write the model's output to this .npy file (float32)");
  app.add_option("--out", out, "also write run.json and latency.csv to this directory");
  add_overwrite_flag(app, &overwrite);
  add_no_optimize_flag(app, &no_optimize);
  add_precision_option(app, &precision);
  add_threads_option(app, &threads);
  app.add_flag("--json", json, "print the result as one JSON object on the last line");
  int code = 0;
  if (!parse(app, args, "infer", &code)) return code;
  apply_threads(threads);

  // An ONNX file's dynamic image size, where --input does not give it, is the --inputs file's.
  Tensor given;
  std::optional<Shape> dynamic_size;
  if (!inputs_file.empty()) {
    given = read_npy(inputs_file);
    if (model.input.empty() && given.rank() >= 2)
      dynamic_size = Shape(given.shape().begin() + 1, given.shape().end());
  }
  auto [g, params] = model.load(seed, {}, dynamic_size);
  if (g.inputs().size() != 1)
    fail("model '{}' takes {} inputs; telar infer feeds one image batch", model.model,
         g.inputs().size());
  // The input is read and checked before anything is compiled or written.
  const Shape& declared = g.value(g.inputs()[0]).shape;
  Tensor x;
  if (!inputs_file.empty()) {
    x = given;
    require(x.rank() == static_cast<int>(declared.size()) &&
                std::equal(declared.begin() + 1, declared.end(), x.shape().begin() + 1),
            "--inputs {}: shape {} does not fit the model's input {} (the first dimension is "
            "the batch)",
            inputs_file, shape_str(x.shape()), shape_str(declared));
    require(app.count("--batch") == 0 || batch == x.dim(0),
            "--inputs {} holds a batch of {}, not --batch {}; leave --batch out (the file's "
            "first dimension is the batch)",
            inputs_file, x.dim(0), batch);
    batch = x.dim(0);
    require(batch >= 1, "--inputs {}: the batch is empty", inputs_file);
  } else {
    x = random_input(declared, batch, seed);
  }
  std::vector<Tensor> inputs = {x};
  backend::CompileOptions options;
  options.precision = backend::parse_precision(precision, "--precision");
  auto exe = backend::compile_for_inference(backend::parse_backend_spec(backend_name), g, params,
                                            !no_optimize, options);
  // The output directory is checked before the measurement, so an unwritable --out fails
  // at once instead of after the timed runs.
  std::optional<report::RunDirectory> run;
  if (!out.empty())
    run.emplace(out, report::reuse_for(overwrite));

  // `warmup` untimed runs, then `repeats` timed ones on the threads the CPU chose (its thread
  // choice's probes are timed too, marked in latency.csv and left out of the figures).
  backend::MeasureOptions measure;
  measure.warmup_seconds = 0.0;
  measure.warmup_runs = warmup;
  measure.duration_seconds = 0.0;
  measure.min_iterations = repeats;
  const backend::TimedRuns runs = backend::measure_forward(*exe, inputs, measure);
  const std::vector<double> ms = runs.chosen();
  if (!outputs_file.empty()) write_npy(outputs_file, exe->output(0));  // the same every run
  const double median = percentile(ms, 0.5);
  const double throughput = static_cast<double>(batch) / (median * 1e-3);
  std::cout << fmt::format(
      "{} on {} (batch {}, {} threads{}): median {:.3f} ms, p10 {:.3f} ms, p90 {:.3f} ms, "
      "{:.1f} samples/s\n",
      model.model, exe->name(), batch, compute_threads(), no_optimize ? ", not optimized" : "",
      median, percentile(ms, 0.1),
      percentile(ms, 0.9), throughput);
  nlohmann::json result = {{"model", model.model},     {"backend", exe->name()},
                           {"batch", batch},           {"threads", compute_threads()},
                           {"optimized", !no_optimize},
                           {"precision", precision},
                           {"latency_ms_median", median}, {"latency_ms_p10", percentile(ms, 0.1)},
                           {"latency_ms_p90", percentile(ms, 0.9)},
                           {"samples_per_s", throughput}};
  if (run) {
    std::string csv = "repeat,latency_ms,probe\n";
    for (std::size_t i = 0; i < runs.ms.size(); ++i)
      csv += fmt::format("{},{:.6f},{}\n", i, runs.ms[i], runs.probe[i] ? 1 : 0);
    write_file_atomic(run->file("latency.csv"), csv);
    run->write_run_json("infer", {{"model", model.model}, {"batch", batch}, {"warmup", warmup},
                                 {"repeats", repeats}, {"backend", backend_name}},
                       {{"result", result}});
  }
  if (json) print_json(result);
  return 0;
}

}  // namespace telar::cli
