// telar eval: evaluates a trained checkpoint on a data set.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "backend/inference.hpp"
#include "cli/data_options.hpp"
#include "cli/model_options.hpp"
#include "cli/trained_model.hpp"
#include "core/parse.hpp"
#include "graph/zoo/zoo.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/threads.hpp"
#include "graph/loss.hpp"
#include "onnx/import.hpp"
#include "train/checkpoint.hpp"
#include "train/data/data_loader.hpp"
#include "train/data/split.hpp"
#include "train/evaluate.hpp"

namespace telar::cli {

namespace fs = std::filesystem;

int run_eval(const Args& args) {
  CLI::App app{"Evaluate a checkpoint (from telar train) on a data set: loss and accuracy.",
               "eval"};
  std::string checkpoint, split = "test", backend_name = "cpu";
  DataOptions data;
  data.add_to(app);
  std::int64_t batch_size = 256;
  int threads = 0;
  bool json = false, no_optimize = false;
  std::string precision;  // default: int8 for a quantized model, else fp32
  app.add_option("--checkpoint", checkpoint, "a run directory or its checkpoint file")->required();
  app.add_option("--split", split,
                 "test | train | validation (the part of the training set the run held out; "
                 "--validation overrides the run's size)");
  app.add_option("--batch-size", batch_size, "samples per batch");
  app.add_option("--backend", backend_name, "cpu, cpu:ref, cpu:threads=N, cuda:N (docs/cuda.md)");
  add_no_optimize_flag(app, &no_optimize);
  add_precision_option(app, &precision);
  add_threads_option(app, &threads);
  app.add_flag("--json", json, "print the result as one JSON object on the last line");
  int code = 0;
  if (!parse(app, args, "eval", &code)) return code;
  require(batch_size > 0, "--batch-size must be positive, got {}", batch_size);
  require(split == "test" || split == "train" || split == "validation",
          "--split must be test, train or validation, got '{}'", split);
  require(data.validation.empty() || split == "validation",
          "--validation sizes the held-out part of --split validation; add --split validation");
  apply_threads(threads);

  TrainedModel trained = load_trained_model(checkpoint, "--checkpoint");
  const nlohmann::json& config = trained.config;
  // The run's seed gives the same synthetic data and the same validation split as training.
  const auto seed = config.value("seed", std::uint64_t{0});
  train::Dataset set = data.fitted_for(
      split == "test" ? data.load_test(seed, config) : data.load_train(seed, config), trained.net,
      config);
  std::vector<std::int64_t> indices;
  const auto held_out = config.value("validation_samples", std::int64_t{0});
  if (split == "validation" || (split == "train" && held_out > 0)) {
    train::ValidationSize size = train::ValidationSize::of_count(held_out);
    if (!data.validation.empty()) size = train::ValidationSize::parse(data.validation);
    require(split != "validation" || size.fraction > 0.0 || size.count > 0,
            "--split validation: the run held out no validation samples; give --validation "
            "(e.g. 0.1)");
    auto parts = train::split_train_validation(set.size(), size, seed);
    indices = split == "validation" ? std::move(parts.validation) : std::move(parts.train);
  } else {
    for (std::int64_t i = 0; i < set.size(); ++i) indices.push_back(i);
  }
  const graph::Graph g = graph::with_loss(trained.net, trained.loss);
  // A quantized model runs at int8 by default where the backend runs int8 (the cpu on oneDNN).
  if (precision.empty())
    precision =
        trained.quantization && backend::runs_int8(backend::parse_backend_spec(backend_name))
            ? "int8"
            : "fp32";
  backend::CompileOptions options;
  options.precision = backend::parse_precision(precision, "--precision");
  options.quantization = trained.quantization;
  auto exe = backend::compile_for_inference(backend::parse_backend_spec(backend_name), g,
                                            trained.weights, !no_optimize, options);
  train::DataLoader loader(set, indices, {batch_size, false, false, 0});
  const train::PhaseMetrics m = train::evaluate_classifier(*exe, loader);
  std::cout << fmt::format("{} ({}) on {} ({} samples): accuracy {:.4f}, loss {:.4f}, {:.2f} s\n",
                           trained.net.name(), precision,
                           split == "test" ? set.name : set.name + " (" + split + " part)",
                           m.samples, m.accuracy, m.loss, m.seconds);
  if (json)
    print_json({{"loss", m.loss}, {"accuracy", m.accuracy}, {"samples", m.samples},
                {"split", split}, {"checkpoint", trained.checkpoint.string()},
                {"precision", precision}});
  return 0;
}

}  // namespace telar::cli
