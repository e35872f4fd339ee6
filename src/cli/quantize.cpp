// telar quantize: int8 post-training static quantization of a model trained by telar train.
// Calibration runs the model compiled for inference over batches of real training samples and
// records each activation's range (min/max, or a percentile of the magnitudes); the folder it
// writes (the checkpoint and quantization.json) runs at --precision int8 in eval and bench.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "backend/calibration.hpp"
#include "backend/cpu/cpu_backend.hpp"
#include "backend/inference.hpp"
#include "cli/data_options.hpp"
#include "cli/model_options.hpp"
#include "cli/quantized_model.hpp"
#include "cli/trained_model.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/progress.hpp"
#include "core/threads.hpp"
#include "optimize/inference.hpp"
#include "report/run_dir.hpp"
#include "train/data/data_loader.hpp"

namespace telar::cli {

namespace fs = std::filesystem;

int run_quantize(const Args& args) {
  CLI::App app{
      "int8 post-training static quantization of a model trained by telar train: calibrate "
      "each activation's range on real training samples, save a model that eval and bench run "
      "at --precision int8, and report its test accuracy next to fp32's.",
      "quantize"};
  std::string checkpoint, out, method = "minmax";
  DataOptions data;
  data.add_to(app, /*validation=*/false);
  std::int64_t calibration_batches = 32, batch_size = 64;
  double percentile = 99.99;
  std::uint64_t seed = 0;
  bool overwrite = false, no_accuracy = false, json = false;
  int threads = 0;
  app.add_option("--checkpoint", checkpoint,
                 "the trained model: a run directory or its checkpoint file")
      ->required();
  app.add_option("--out", out, "write the quantized model here (a folder)")->required();
  app.add_option("--calibration-batches", calibration_batches,
                 "batches of training samples calibration runs (default 32)");
  app.add_option("--batch-size", batch_size, "samples per calibration batch (default 64)");
  app.add_option("--calibration", method,
                 "how a range is taken from what calibration saw: minmax (default: the extremes) "
                 "or percentile (the --percentile of the magnitudes: outliers clipped)");
  app.add_option("--percentile", percentile,
                 "--calibration percentile: the share (%) of magnitudes inside the range "
                 "(default 99.99)");
  std::vector<std::string> excluded;
  app.add_option("--exclude", excluded,
                 "convolutions or Linear layers kept in fp32, comma-separated (names as telar "
                 "models show --optimized prints them): mixed precision where a layer's "
                 "quantization costs accuracy")
      ->delimiter(',');
  app.add_option("--seed", seed, "which training samples calibration draws")->check(at_least(0));
  bool sensitivity = false;
  app.add_flag("--sensitivity", sensitivity,
               "also each convolution's and Linear's int8 error alone (the model's output "
               "error with only that layer in int8), most sensitive first: which to --exclude");
  app.add_flag("--no-accuracy", no_accuracy,
               "skip the test-set accuracy of fp32 and int8 (measured by default)");
  add_overwrite_flag(app, &overwrite, "quantized model");
  add_threads_option(app, &threads);
  app.add_flag("--json", json, "print the result as one JSON object on the last line");
  int code = 0;
  if (!parse(app, args, "quantize", &code)) return code;
  apply_threads(threads);
  require(calibration_batches > 0, "--calibration-batches must be at least 1, got {}",
          calibration_batches);
  require(batch_size > 0, "--batch-size must be at least 1, got {}", batch_size);
  backend::CalibrationOptions calibration;
  calibration.method = backend::parse_calibration_method(method, "--calibration");
  calibration.percentile = percentile;
  require(percentile > 0.0 && percentile <= 100.0,
          "--percentile {} is out of range; give a share of the values in (0, 100], e.g. 99.99",
          percentile);
  require(calibration.method == backend::CalibrationMethod::Percentile ||
              app.count("--percentile") == 0,
          "--percentile sets the percentile method's share; add --calibration percentile");
  require(backend::cpu::has_int8(),
          "int8 needs a CPU with VNNI (avx512_vnni or avx_vnni); oneDNN dispatches to {} here",
          backend::cpu::dispatched_isa());

  refuse_quantized(checkpoint, "telar quantize starts from a model's fp32 weights");
  TrainedModel trained = load_trained_model(checkpoint, "--checkpoint");
  const nlohmann::json& config = trained.config;
  if (!excluded.empty()) {
    const graph::Graph compiled =
        optimize::optimize_for_inference(trained.net, trained.weights).graph;
    for (const std::string& name : excluded) {
      const graph::Node* n = compiled.find_node(name);
      require(n && backend::quantized_layer(*n),
              "--exclude {}: {} has no convolution or Linear of that name as compiled for "
              "inference; see telar models show --optimized for the names",
              name, trained.net.name());
    }
  }
  const auto run_seed = config.value("seed", std::uint64_t{0});
  const Shape input = sample_input(trained.net);
  train::Dataset train_set = data.load_train(run_seed, config);
  require(train_set.sample_shape() == input || !data.fit.empty() || config.contains("fit"),
          "the calibration data's samples ({}) are {} but the model takes {}; give data of the "
          "model's input shape, or --fit resize|pad",
          train_set.name, shape_str(train_set.sample_shape()), shape_str(input));
  train_set = data.fitted_for(train_set, trained.net, config);
  require(calibration_batches * batch_size <= train_set.size(),
          "--calibration-batches {} x --batch-size {} is more than the {} training samples of "
          "{}; ask for fewer",
          calibration_batches, batch_size, train_set.size(), train_set.name);
  std::optional<train::Dataset> test_set;
  if (!no_accuracy)
    test_set.emplace(data.fitted_for(data.load_test(run_seed, config), trained.net, config));
  report::RunDirectory run(out, report::reuse_for(overwrite));

  // Random training samples, a batch at a time.
  train::DataLoader loader(train_set, {batch_size, true, true, seed});
  std::vector<Tensor> batches;
  for (std::int64_t b = 0; b < calibration_batches; ++b)
    batches.push_back(loader.batch(0, b).images.clone());
  std::cout << fmt::format("calibrating {} on {} batches of {} samples of {} ({})\n",
                           trained.net.name(), calibration_batches, batch_size, train_set.name,
                           method);
  std::optional<ProgressBar> bar;
  calibration.progress = [&](int done, int total) {
    if (!bar) bar.emplace("calibration", total);
    bar->update(done);
  };
  auto table = std::make_shared<backend::QuantizationTable>(
      backend::calibrate(trained.net, trained.weights, batches, calibration));
  table->excluded.insert(excluded.begin(), excluded.end());
  if (bar) bar->finish();

  nlohmann::json sensitivities = nlohmann::json::array();
  if (sensitivity) {
    const auto layers =
        backend::layer_sensitivity(trained.net, trained.weights, *table, batches.front());
    std::cout << "int8 error of each layer alone (relative output error on a calibration batch; "
                 "--exclude the worst to keep them in fp32):\n";
    for (const auto& l : layers) {
      std::cout << fmt::format("  {:<32} {:8.3f} %\n", l.node, 100.0 * l.error);
      sensitivities.push_back({{"node", l.node}, {"error", l.error}});
    }
  }
  nlohmann::json provenance = {{"checkpoint", fs::absolute(trained.checkpoint).string()},
                               {"model", trained.net.name()},
                               {"data", train_set.name},
                               {"calibration_batches", calibration_batches},
                               {"batch_size", batch_size},
                               {"seed", seed}};
  if (sensitivity) provenance["sensitivity"] = sensitivities;
  nlohmann::json result = {{"out", run.path().string()}, {"values", table->ranges.size()}};
  if (test_set) {
    const backend::BackendSpec cpu = backend::parse_backend_spec("cpu");
    const double fp32 = test_accuracy(trained, *test_set, cpu, backend::Precision::FP32, nullptr);
    const double int8 = test_accuracy(trained, *test_set, cpu, backend::Precision::INT8, table);
    std::cout << fmt::format(
        "test accuracy on {} ({} samples): fp32 {:.4f}, int8 {:.4f} ({:+.2f} pp)\n", test_set->name,
        test_set->size(), fp32, int8, 100.0 * (int8 - fp32));
    provenance["accuracy"] = {{"fp32", fp32}, {"int8", int8}, {"test_set", test_set->name}};
    result["accuracy_fp32"] = fp32;
    result["accuracy_int8"] = int8;
  }
  write_file_atomic(run.file(train::kCheckpointFileName), read_file(trained.checkpoint));
  write_file_atomic(run.file(kQuantizationFileName),
                    quantization_json(*table, provenance).dump(2) + "\n");
  run.write_run_json("quantize", {{"options", args}}, {{"quantization", provenance}});
  std::cout << fmt::format(
      "wrote {}: {} calibrated values; run it with telar eval|bench --checkpoint {} (int8)\n",
      run.path().string(), table->ranges.size(), run.path().string());
  if (json) print_json(result);
  return 0;
}

}  // namespace telar::cli
