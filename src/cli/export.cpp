// telar export: a model (a zoo model with its random weights, an ONNX file, or what telar train
// trained) written as an ONNX file that any ONNX runtime runs.
#include "onnx/export.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "cli/model_options.hpp"
#include "cli/trained_model.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "onnx/import.hpp"
#include "optimize/inference.hpp"

namespace telar::cli {

namespace fs = std::filesystem;

int run_export(const Args& args) {
  CLI::App app{"Write a model as an ONNX file: a run's trained model (--checkpoint), or a zoo "
               "model or ONNX file (--model) with its weights.",
               "export"};
  ModelOptions model;
  model.add_to(app, "", false);
  std::string checkpoint, out;
  int opset = onnx::kDefaultExportOpset;
  std::uint64_t seed = 0;
  bool overwrite = false;
  app.add_option("--checkpoint", checkpoint,
                 "a run directory of telar train (or its checkpoint file): its trained model");
  app.add_option("--out", out, "the .onnx file to write")->required();
  app.add_option("--opset", opset,
                 fmt::format("ONNX opset to write ({} to {})", onnx::kMinExportOpset,
                             onnx::kMaxOpset));
  app.add_option("--seed", seed, "seed for a zoo model's random weights")->check(at_least(0));
  add_overwrite_flag(app, &overwrite, "file");
  app.footer("examples: telar export --checkpoint runs/train-... --out mnist_cnn.onnx\n"
             "          telar export --model resnet18 --input 3x224x224 --out resnet18.onnx");
  int code = 0;
  if (!parse(app, args, "export", &code)) return code;
  const bool from_model = !model.model.empty();
  if (!checkpoint.empty()) model.refuse_beside_checkpoint();
  require(from_model != !checkpoint.empty(),
          "give the model to export: --checkpoint RUN (a trained model) or --model NAME");
  require(opset >= onnx::kMinExportOpset && opset <= onnx::kMaxOpset,
          "--opset {}: telar exports opsets {} to {}", opset, onnx::kMinExportOpset,
          onnx::kMaxOpset);
  require(fs::path(out).extension() == ".onnx", "--out {}: name the file .onnx", out);
  require(overwrite || !fs::exists(out), "--out {} exists; add --overwrite to replace it", out);
  const fs::path parent = fs::path(out).parent_path();
  require(parent.empty() || fs::is_directory(parent), "--out {}: the directory {} does not exist",
          out, parent.string());

  graph::Graph net;
  graph::ParameterSet weights;
  std::string what;
  std::map<std::string, graph::Int8Encoding> int8;  // a quantized model's encodings
  std::set<std::string> fp32_nodes;                 // and the nodes it keeps in fp32
  if (from_model) {
    auto loaded = model.load(seed);
    net = std::move(loaded.graph);
    weights = std::move(loaded.weights);
    what = model.model;
  } else {
    TrainedModel trained = load_trained_model(checkpoint, "--checkpoint");
    what = fmt::format("{} (trained, {})", trained.config["model"].get<std::string>(),
                       trained.checkpoint.string());
    if (trained.quantization) {
      // A quantized model: the graph its calibration describes (compiled for inference), as
      // int8 QDQ.
      optimize::InferenceGraph compiled =
          optimize::optimize_for_inference(trained.net, trained.weights);
      net = std::move(compiled.graph);
      weights = std::move(compiled.params);
      for (const auto& [value, range] : trained.quantization->ranges)
        int8[value] = graph::int8_encoding(range);
      fp32_nodes = trained.quantization->excluded;
      what += ", int8 QDQ";
    } else {
      net = std::move(trained.net);
      weights = std::move(trained.weights);
    }
  }
  onnx::ExportOptions options;
  options.int8 = std::move(int8);
  options.fp32_nodes = std::move(fp32_nodes);
  options.opset = opset;
  options.producer_version = version();
  onnx::export_model(net, weights, out, options);
  std::cout << fmt::format("wrote {} ({} nodes, {} parameters, opset {}) from {}\n", out,
                           net.nodes().size(), net.parameter_count(), opset, what);
  return 0;
}

}  // namespace telar::cli
