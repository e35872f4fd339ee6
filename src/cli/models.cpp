// telar models [show NAME] : the model zoo.
#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>

#include "adapt/channel_groups.hpp"
#include "cli/common.hpp"
#include "cli/model_options.hpp"
#include "core/error.hpp"
#include "core/parse.hpp"
#include "graph/cost.hpp"
#include "graph/dump.hpp"
#include "graph/parameters.hpp"
#include "graph/zoo/zoo.hpp"
#include "optimize/inference.hpp"

namespace telar::cli {

int run_models(const Args& args) {
  CLI::App app{"List the model zoo with parameter counts, or show one model's layers.", "models"};
  std::string input, spec;
  std::int64_t classes = 0;
  bool json = false, optimized = false, prunable = false;
  auto* show = app.add_subcommand("show", "print one model's layers, shapes, parameters and MACs");
  show->add_option("model", spec, "model as NAME[:ARGS] or FILE.onnx, e.g. mlp:784-256-10")
      ->required();
  show->add_flag("--optimized", optimized,
                 "show the graph as compiled for inference on cpu: BatchNorm folded, Dropout "
                 "removed, residual Adds and activations fused (docs/inference.md)");
  show->add_flag("--prunable", prunable,
                 "list the model's channel groups: the layers whose output channels are pruned "
                 "together, and why a group cannot be pruned (docs/adapt.md)");
  for (auto* a : {&app, show}) {
    a->add_option("--input", input, "input shape CxHxW (default: the model's own)");
    a->add_option("--classes", classes, "number of classes (default: the model's own)")
        ->check(at_least(1));
    a->add_flag("--json", json, "print the result as one JSON object on the last line");
  }
  int code = 0;
  if (!parse(app, args, "models", &code)) return code;

  graph::zoo::ModelOptions options;
  if (!input.empty()) options.input = parse_dims(input, "--input");
  if (classes > 0) options.classes = classes;

  if (*show) {
    graph::Graph g;
    std::vector<optimize::PassCount> passes;
    if (optimized) {
      // With the model's own weights: an ONNX file's constants (GELU's sqrt 2, say) decide
      // which rewrites apply.
      LoadedModel m = load_model(spec, options, {});
      optimize::InferenceGraph opt = optimize::optimize_for_inference(m.graph, m.weights);
      g = std::move(opt.graph);
      passes = std::move(opt.passes);
    } else {
      g = build_model(spec, options);
    }
    std::cout << graph::dump(g);
    if (optimized) {
      std::cout << "inference passes:";
      for (const auto& p : passes) std::cout << fmt::format(" {} {}", p.pass, p.rewrites);
      std::cout << "\n";
    }
    nlohmann::json groups_json = nlohmann::json::array();
    if (prunable) {
      const adapt::ChannelGroups groups(g);
      std::cout << fmt::format("\nchannel groups: {} of {} prunable\n", groups.prunable().size(),
                               groups.groups().size());
      std::vector<std::string> names;
      std::size_t width = 6;
      for (const adapt::ChannelGroup& group : groups.groups()) {
        std::vector<std::string> layers;
        for (graph::NodeId n : group.sources) layers.push_back(g.node(n).name);
        names.push_back(fmt::format("{}", fmt::join(layers, ", ")));
        width = std::max(width, names.back().size());
      }
      const auto row = [&](auto group, auto channels, const std::string& layers,
                           const std::string& verdict) {
        std::cout << fmt::format("{:<5} {:>8}  {:<{}}  {}\n", group, channels, layers, width,
                                 verdict);
      };
      row("group", "channels", "layers", "prunable");
      for (std::size_t i = 0; i < groups.groups().size(); ++i) {
        const adapt::ChannelGroup& group = groups.groups()[i];
        std::vector<std::string> layers;
        for (graph::NodeId n : group.sources) layers.push_back(g.node(n).name);
        row(i, group.channels, names[i], group.blocked.empty() ? "yes" : "no: " + group.blocked);
        groups_json.push_back({{"layers", layers},
                               {"channels", group.channels},
                               {"prunable", group.blocked.empty()},
                               {"blocked", group.blocked}});
      }
    }
    if (json) {
      nlohmann::json nodes = nlohmann::json::array();
      for (const auto& n : g.nodes()) {
        const auto cost = graph::node_cost(g, n, graph::CostOptions{1, 1.0});
        nodes.push_back({{"name", n.name},
                         {"op", std::string(graph::op_name(n.kind))},
                         {"output", shape_str(g.value(n.outputs[0]).shape)},
                         {"macs", cost.macs},
                         {"bytes", cost.bytes()}});
      }
      const auto total = graph::graph_cost(g, graph::CostOptions{1, 1.0});
      print_json({{"model", spec},
                  {"parameters", g.parameter_count()},
                  {"macs_per_sample", total.macs},
                  {"bytes_per_sample", total.bytes()},
                  {"nodes", nodes},
                  {"optimized", optimized},
                  {"channel_groups", groups_json}});
    }
    return 0;
  }
  nlohmann::json list = nlohmann::json::array();
  const std::string row = "{:<20} {:>12} {:<14} {}\n";
  std::cout << fmt::format(fmt::runtime(row), "model", "parameters", "input", "description");
  for (const auto& m : graph::zoo::models()) {
    const std::string spec_name = m.name == "mlp" ? "mlp:784-256-128-10" : m.name;
    const std::string description =
        m.description + (m.args.empty() ? "" : fmt::format(" [:ARGS = {}]", m.args));
    // With --input, a model that cannot take that shape is listed as such; the others still are.
    try {
      graph::Graph g = graph::zoo::build(spec_name, options);
      std::cout << fmt::format(fmt::runtime(row), spec_name, g.parameter_count(),
                               shape_str(g.value(g.inputs()[0]).shape), description);
      list.push_back({{"model", spec_name}, {"parameters", g.parameter_count()}});
    } catch (const Error& e) {
      if (input.empty()) throw;
      std::cout << fmt::format(fmt::runtime(row), spec_name, "-", "(not " + input + ")",
                               description);
      list.push_back({{"model", spec_name}, {"parameters", nullptr}, {"error", e.what()}});
    }
  }
  if (json) print_json({{"models", list}});
  return 0;
}

}  // namespace telar::cli
