// telar simulate: a whole model on simulated accelerators (the `sim:` backend), per layer and
// in total, with a run directory (report.html, per-layer CSV and JSON, STONNE's files per call).
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "backend/backend.hpp"
#include "backend/sim/sim_backend.hpp"
#include "cli/model_options.hpp"
#include "cli/simulate_report.hpp"
#include "cli/trained_model.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/parse.hpp"
#include "core/rng.hpp"
#include "graph/loss.hpp"
#include "graph/parameters.hpp"
#include "report/run_dir.hpp"
#include "sim/energy.hpp"
#include "train/checkpoint.hpp"

namespace telar::cli {

namespace fs = std::filesystem;
namespace bs = backend::sim;

namespace {

// Inputs for one batch: images and features uniform in [0, 1); for an EmbeddingBag, bags of 1
// to 8 distinct random rows (indices and offsets); other integer inputs zero.
std::vector<Tensor> synthetic_inputs(const graph::Graph& g, std::int64_t batch,
                                     std::uint64_t seed) {
  Rng rng(seed);
  std::vector<Tensor> inputs(g.inputs().size());
  std::map<graph::ValueId, std::size_t> position;
  for (std::size_t i = 0; i < g.inputs().size(); ++i) position[g.inputs()[i]] = i;
  for (const graph::Node& node : g.nodes()) {
    if (node.kind != graph::OpKind::EmbeddingBag) continue;
    const auto& a = node.attr<graph::EmbeddingBagAttrs>();
    auto idx = position.find(node.inputs[0]), off = position.find(node.inputs[1]);
    if (idx == position.end() || off == position.end()) continue;
    std::vector<std::int64_t> indices, offsets;
    for (std::int64_t b = 0; b < batch; ++b) {
      offsets.push_back(static_cast<std::int64_t>(indices.size()));
      const std::int64_t bag = 1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(
                                       std::min<std::int64_t>(8, a.num_embeddings))));
      std::set<std::int64_t> rows;
      while (static_cast<std::int64_t>(rows.size()) < bag)
        rows.insert(
            static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(a.num_embeddings))));
      indices.insert(indices.end(), rows.begin(), rows.end());
    }
    Tensor ti({static_cast<std::int64_t>(indices.size())}, DType::I64);
    std::copy(indices.begin(), indices.end(), ti.data<std::int64_t>());
    Tensor to({batch}, DType::I64);
    std::copy(offsets.begin(), offsets.end(), to.data<std::int64_t>());
    inputs[idx->second] = ti;
    inputs[off->second] = to;
  }
  for (std::size_t i = 0; i < g.inputs().size(); ++i) {
    if (inputs[i].defined()) continue;
    const graph::Value& v = g.value(g.inputs()[i]);
    Shape shape = bind_batch(v.shape, batch);
    for (auto& d : shape)
      if (d == kDynamicDim) d = batch;
    Tensor t(shape, v.dtype);
    if (v.dtype == DType::F32)
      for (float& x : t.span<float>()) x = rng.uniform(0.0f, 1.0f);
    inputs[i] = t;
  }
  return inputs;
}

double max_abs_difference(const Tensor& a, const Tensor& b) {
  require(a.numel() == b.numel(), "internal: outputs of {} and {} values", a.numel(), b.numel());
  double m = 0.0;
  const float *x = a.f32(), *y = b.f32();
  for (std::int64_t i = 0; i < a.numel(); ++i)
    m = std::max(m, static_cast<double>(std::fabs(x[i] - y[i])));
  return m;
}

// "sim:a.cfg,sim:b.toml" (an entry may omit "sim:" before a .cfg or .toml file).
std::vector<std::string> split_backends(const std::string& text) {
  std::vector<std::string> out;
  for (std::string s : split(text, ',')) {
    s = std::string(trim(s));
    if (s.empty()) continue;
    const bool file = s.ends_with(".cfg") || s.ends_with(".toml");
    if (s.rfind("sim:", 0) != 0 && file) s = "sim:" + s;
    out.push_back(s);
  }
  require(!out.empty(), "--backend needs at least one sim:CONFIG");
  return out;
}

// A short unique name per backend, for directories and chart legends.
std::string backend_label(const std::string& spec) {
  return fs::path(spec.substr(4)).stem().string();
}

}  // namespace

int run_simulate(const Args& args) {
  CLI::App app{
      "Simulate a whole model on DNN accelerators (the sim: backend): cycles, Global "
      "Buffer traffic, utilization and energy per layer and in total, with report.html. "
      "Values come from the host (they equal the cpu backend's); time from the "
      "accelerator model. See docs/simulate.md.",
      "simulate"};
  ModelOptions model;
  model.add_to(app, "", /*required=*/false);
  std::string checkpoint, backends_text, out, tile_dir, energy_table;
  std::int64_t batch = 1;
  double weight_sparsity = 0.0;
  std::uint64_t seed = 0;
  bool json = false, exact = false, no_files = false, overwrite = false;
  app.add_option("--checkpoint", checkpoint,
                 "a model with its weights from a telar train or adapt run (its directory or "
                 "checkpoint file); with --model, only the weights (checked against it); "
                 "default: --model with random weights");
  app.add_option("--backend", backends_text,
                 "sim:CONFIG.cfg or sim:HYBRID.toml; several separated by commas to compare")
      ->required();
  app.add_option("--batch", batch, "batch size")->check(at_least(1));
  app.add_option("--out", out, "run directory (default: runs/simulate-<time>)");
  add_overwrite_flag(app, &overwrite);
  app.add_option("--weight-sparsity", weight_sparsity,
                 "prune Linear/Conv2d weights by magnitude to this fraction of zeros (0..1); "
                 "pruned layers run on the target's SIGMA accelerator");
  app.add_option("--tiles", tile_dir,
                 "tile files per layer: DIR/<layer name>.txt (else the mapper)");
  app.add_option("--energy-table", energy_table, "energy/area table (default: the built-in one)");
  app.add_option("--seed", seed, "seed of the random weights and input")->check(at_least(0));
  app.add_flag("--exact-cycle-loop", exact, "step every cycle (slow oracle mode)");
  app.add_flag("--no-stonne-files", no_files, "do not write STONNE's files per simulator call");
  app.add_flag("--json", json, "print the totals as one JSON object on the last line");
  int code = 0;
  if (!parse(app, args, "simulate", &code)) return code;
  if (!out.empty())
    report::check_run_path(out, report::reuse_for(overwrite));
  require(weight_sparsity >= 0.0 && weight_sparsity < 1.0,
          "--weight-sparsity={} must be a fraction of zeros, at least 0 and below 1{}",
          weight_sparsity,
          weight_sparsity >= 1.0 && weight_sparsity < 100.0
              ? fmt::format(" ({}% is {})", weight_sparsity, weight_sparsity / 100.0)
              : "");

  // Everything that can be wrong with the input is checked before any file is written.
  const std::vector<std::string> backends = split_backends(backends_text);
  std::vector<backend::BackendSpec> specs;
  std::set<std::string> labels;
  for (const std::string& b : backends) {
    specs.push_back(backend::parse_backend_spec(b));
    require(specs.back().kind == "sim", "--backend {}: telar simulate takes sim: backends", b);
    require(!specs.back().target.empty(), "--backend {}: name a .cfg or .toml file", b);
    bs::load_target(specs.back().target);
    require(labels.insert(backend_label(b)).second,
            "--backend lists two targets named '{}'; give files with different names",
            backend_label(b));
  }
  if (!tile_dir.empty())
    require(fs::is_directory(tile_dir), "--tiles {}: not a directory", tile_dir);
  if (!energy_table.empty()) sim::load_energy_table(energy_table);

  require(!model.model.empty() || !checkpoint.empty(),
          "give the model to simulate: --model NAME|FILE.onnx, or --checkpoint RUN (a telar "
          "train or adapt run)");
  graph::Graph net;
  graph::ParameterSet params;
  if (model.model.empty()) {
    for (const char* option : {"--input", "--classes", "--init"})
      require(app.count(option) == 0,
              "{} shapes --model; --checkpoint alone simulates the run's own model (its input, "
              "classes and channel counts): leave {} out, or give --model",
              option, option);
    // The run's own model: its input, classes, and channel counts as adapted.
    TrainedModel trained = load_trained_model(checkpoint, "--checkpoint");
    net = std::move(trained.net);
    params = std::move(trained.weights);
  } else {
    LoadedModel loaded = model.load(seed);  // an ONNX model's own weights, unless --init random
    net = std::move(loaded.graph);
    params = std::move(loaded.weights);
  }
  if (!checkpoint.empty() && !model.model.empty()) {
    // The weights of a run of --model (its structure comes from --model, checked against the
    // checkpoint's fingerprint).
    const fs::path path = checkpoint_file(checkpoint, "--checkpoint");
    const train::Checkpoint ckpt = train::read_checkpoint(path);
    auto config = nlohmann::json::parse(ckpt.trainer.config_json, nullptr, false);
    const std::string loss =
        config.is_object() ? config.value("loss", std::string("cross_entropy")) : "cross_entropy";
    restore_trained_weights(ckpt, path, net, graph::parse_loss(loss), params);
  }
  const std::vector<Tensor> inputs = synthetic_inputs(net, batch, seed);

  const fs::path run_path = out.empty() ? report::default_run_path("simulate") : fs::path(out);
  const bool created = !fs::exists(run_path);
  ensure_writable_dir(run_path, "--out");
  // Work in a fresh directory beside the run directory; move it into place at the end.
  const fs::path work = run_path.parent_path() /
                        fmt::format(".{}.partial-{}", run_path.filename().string(), ::getpid());
  fs::remove_all(work);
  // On failure nothing stays behind: neither the work directory nor a run directory this
  // command created.
  struct Cleanup {
    fs::path work, created;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(work, ec);
      if (!created.empty()) fs::remove_all(created, ec);
    }
  } cleanup{work, created ? run_path : fs::path()};
  report::RunDirectory run(work);

  // The reference values: the cpu backend on the same (pruned) weights.
  graph::ParameterSet reference = params;
  if (weight_sparsity > 0)
    for (const graph::Node& node : net.nodes())
      if (node.kind == graph::OpKind::Linear || node.kind == graph::OpKind::Conv2d) {
        Tensor w = params.at(node.inputs[1]).clone();
        bs::prune_by_magnitude(w, weight_sparsity);
        reference.set(node.inputs[1], std::move(w));
      }
  auto cpu = backend::compile(backend::parse_backend_spec("cpu"), net, reference);
  cpu->forward(inputs, backend::Mode::Eval);

  std::vector<SimulatedBackend> results;
  for (std::size_t k = 0; k < specs.size(); ++k) {
    SimulatedBackend r;
    r.spec = backends[k];
    r.label = backend_label(backends[k]);
    bs::SimOptions o;
    o.weight_sparsity = weight_sparsity;
    o.tile_dir = tile_dir;
    o.exact_cycle_loop = exact;
    o.energy_table = energy_table;
    if (!no_files) o.stats_dir = work / "stonne" / r.label;
    Stopwatch sw;
    auto exe = bs::compile(specs[k], net, params, {}, o);
    exe->forward(inputs, backend::Mode::Eval);
    r.seconds = sw.seconds();
    const bs::Simulated* s = bs::simulated(*exe);
    r.nodes = s->node_simulations();
    r.files = s->written_files().size();
    r.max_abs_diff = 0.0;
    for (std::size_t i = 0; i < net.outputs().size(); ++i)
      r.max_abs_diff = std::max(r.max_abs_diff, max_abs_difference(exe->output(i), cpu->output(i)));
    results.push_back(std::move(r));
  }

  const std::string model_name = model.model.empty() ? net.name() : model.model;
  SimulateRun info{model_name, batch, weight_sparsity, checkpoint, run_path};
  for (const SimulatedBackend& r : results) print_layer_table(std::cout, info, r);
  if (results.size() > 1) print_comparison(std::cout, results);
  write_simulation_outputs(run, info, results);
  run.write_run_json("simulate",
                     {{"model", model_name},
                      {"input", fmt::format("{}", fmt::join(sample_input(net), "x"))},
                      {"classes", net.value(net.outputs()[0]).shape.back()},
                      {"checkpoint", checkpoint},
                      {"backends", backends},
                      {"batch", batch},
                      {"weight_sparsity", weight_sparsity},
                      {"tiles", tile_dir},
                      {"exact_cycle_loop", exact},
                      {"seed", seed}},
                     {{"result", totals_json(results)}});
  // Move the finished run into place (into an existing directory entry by entry; a run it
  // replaces goes first).
  if (overwrite && report::holds_run(run_path)) {
    fs::remove_all(run_path);
    fs::create_directories(run_path);
  }
  for (const auto& e : fs::directory_iterator(work)) {
    const fs::path dest = run_path / e.path().filename();
    fs::remove_all(dest);
    fs::rename(e.path(), dest);
  }
  cleanup.created.clear();
  std::cout << fmt::format("wrote {}\n", (run_path / "report.html").string());
  if (json) print_json(totals_json(results));
  return 0;
}

}  // namespace telar::cli
