// telar eval: evaluates a trained checkpoint on a data set.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "backend/backend.hpp"
#include "cli/data_options.hpp"
#include "core/parse.hpp"
#include "graph/zoo/zoo.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/threads.hpp"
#include "graph/loss.hpp"
#include "train/checkpoint.hpp"
#include "train/data/data_loader.hpp"
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
  bool json = false;
  app.add_option("--checkpoint", checkpoint, "a run directory or its checkpoint file")->required();
  app.add_option("--split", split, "test | train");
  app.add_option("--batch-size", batch_size, "samples per batch");
  app.add_option("--backend", backend_name, "cpu, cpu:ref, cpu:threads=N");
  add_threads_option(app, &threads);
  app.add_flag("--json", json, "print the result as one JSON object on the last line");
  int code = 0;
  if (!parse(app, args, "eval", &code)) return code;
  require(batch_size > 0, "--batch-size must be positive, got {}", batch_size);
  require(split == "test" || split == "train", "--split must be test or train, got '{}'", split);
  apply_threads(threads);

  fs::path path = checkpoint;
  if (fs::is_directory(path)) path /= train::kCheckpointFileName;
  if (!fs::exists(path)) fail("--checkpoint {}: no such file", path.string());
  const train::Checkpoint ckpt = train::read_checkpoint(path);
  // The checkpoint records the run's configuration: rebuild the same model from it.
  auto config = nlohmann::json::parse(ckpt.trainer.config_json, nullptr, false);
  if (!config.is_object() || !config.contains("model"))
    fail("checkpoint {} does not record its model configuration; it was not written by telar "
         "train",
         path.string());
  graph::zoo::ModelOptions zoo;
  zoo.input = parse_dims(config.value("input", std::string("")), "checkpoint input shape");
  zoo.classes = config.value("classes", std::int64_t{10});
  train::Dataset set = split == "test" ? data.load_test(0) : data.load_train(0);
  graph::Graph net = graph::zoo::build(config["model"].get<std::string>(), zoo);
  graph::Graph g = graph::with_loss(net, graph::parse_loss(config.value("loss", std::string("cross_entropy"))));
  graph::ParameterSet params = graph::ParameterSet::initialize(g, 0);
  train::restore_checkpoint(ckpt, path, g, params, nullptr);
  auto exe = backend::compile(backend::parse_backend_spec(backend_name), g, params);
  train::DataLoader loader(set, {batch_size, false, false, 0});
  const train::PhaseMetrics m = train::evaluate_classifier(*exe, loader);
  std::cout << fmt::format("{} on {} ({} samples): accuracy {:.4f}, loss {:.4f}, {:.2f} s\n",
                           net.name(), set.name, m.samples, m.accuracy, m.loss, m.seconds);
  if (json)
    print_json({{"loss", m.loss}, {"accuracy", m.accuracy}, {"samples", m.samples},
                {"checkpoint", path.string()}});
  return 0;
}

}  // namespace telar::cli
