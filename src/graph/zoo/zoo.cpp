#include "graph/zoo/zoo.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/parse.hpp"

namespace telar::graph::zoo {

const std::vector<ModelInfo>& models() {
  static const std::vector<ModelInfo> list = {
      {"mlp", "layer widths as a dash list, e.g. 784-256-128-10",
       "multi-layer perceptron, ReLU between layers", {784}, 10},
      {"mnist_cnn", "", "seed-001 CNN: conv5x5x32, pool, conv5x5x32, pool, fc1024, dropout 0.4",
       {1, 28, 28}, 10},
      {"alexnet", "", "AlexNet (torchvision layout, as NetAdapt's)", {3, 224, 224}, 10},
      {"mobilenet_v1", "width multiplier, e.g. 0.5", "MobileNetV1 (NetAdapt's layout)",
       {3, 224, 224}, 10},
      {"resnet18", "", "ResNet-18 (basic blocks)", {3, 224, 224}, 10},
      {"resnet34", "", "ResNet-34 (basic blocks)", {3, 224, 224}, 10},
  };
  return list;
}

Graph build(const std::string& spec, const ModelOptions& options) {
  const auto colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const std::string args = colon == std::string::npos ? "" : spec.substr(colon + 1);
  const ModelInfo* info = nullptr;
  std::vector<std::string> names;
  for (const auto& m : models()) {
    names.push_back(m.name);
    if (m.name == name) info = &m;
  }
  if (!info) {
    const std::string near = closest_match(name, names);
    fail("unknown model '{}'{}; `telar models` lists them ({})", name,
         near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near), fmt::join(names, ", "));
  }
  if (!args.empty() && info->args.empty())
    fail("model '{}' takes no arguments, got ':{}'", name, args);
  const std::int64_t classes = options.classes.value_or(info->default_classes);
  require(classes > 0, "--classes must be positive, got {}", classes);
  Shape input = options.input.value_or(info->default_input);

  if (name == "mlp") {
    if (args.empty()) fail("model 'mlp' needs its layer widths, e.g. mlp:784-256-128-10");
    auto widths = parse_int_list(args, '-', "mlp widths");
    if (widths.size() < 2) fail("mlp:{} needs at least an input and an output width", args);
    if (options.classes && *options.classes != widths.back())
      fail("--classes {} does not match the last mlp width {}; make them equal", *options.classes,
           widths.back());
    if (!options.input) input = {widths.front()};
    return mlp(widths, input);
  }
  if (name == "mnist_cnn") return mnist_cnn(input, classes);
  if (name == "alexnet") return alexnet(input, classes);
  if (name == "mobilenet_v1") {
    double width = args.empty() ? 1.0 : parse_double(args, "mobilenet_v1 width multiplier");
    require(width > 0.0 && width <= 4.0, "mobilenet_v1 width multiplier {} must be in (0, 4]",
            width);
    return mobilenet_v1(input, classes, width);
  }
  if (name == "resnet18") return resnet(18, input, classes);
  return resnet(34, input, classes);
}

}  // namespace telar::graph::zoo
