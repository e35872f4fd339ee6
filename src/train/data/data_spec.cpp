#include "train/data/data_spec.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "core/error.hpp"
#include "core/parse.hpp"
#include "train/data/synthetic.hpp"

namespace telar::train {

namespace fs = std::filesystem;

const std::vector<std::string>& data_spec_forms() {
  static const std::vector<std::string> forms = {"fashion-mnist", "fashion-mnist:DIR", "mnist:DIR",
                                                 "synthetic[:SAMPLES[:SHAPE[:CLASSES]]]"};
  return forms;
}

namespace {

// MNIST's own file names, compressed or not.
fs::path find_idx_file(const fs::path& dir, DataSplit split, std::string_view kind) {
  const std::string base =
      fmt::format("{}-{}-ubyte", split == DataSplit::Train ? "train" : "t10k", kind);
  for (const std::string& name : {base + ".gz", base})
    if (fs::exists(dir / name)) return dir / name;
  return dir / (base + ".gz");  // reading it gives the missing-file message
}

Dataset synthetic(const std::vector<std::string>& args, std::string_view spec, DataSplit split,
                  std::uint64_t seed) {
  require(args.size() <= 3,
          "data set '{}': synthetic takes at most 3 arguments "
          "(SAMPLES:SHAPE:CLASSES, e.g. synthetic:4096:1x28x28:10)",
          spec);
  const std::string what = fmt::format("data set '{}'", spec);
  SyntheticSpec s;
  s.samples = 4096;
  s.sample_shape = {1, 28, 28};
  s.num_classes = 10;
  s.noise = 1.0f;
  s.seed = seed;
  if (args.size() >= 1) s.samples = parse_int(args[0], what);
  if (args.size() >= 2) s.sample_shape = parse_dims(args[1], what);
  if (args.size() >= 3) s.num_classes = parse_int(args[2], what);
  require(s.samples >= 5, "{}: give at least 5 samples, so that the test split has one", what);
  if (split == DataSplit::Test) s.samples /= 5;
  s.name = fmt::format("synthetic/{}", data_split_name(split));
  return make_synthetic_classification(s, split == DataSplit::Train ? 0 : 1);
}

}  // namespace

Dataset load_dataset(std::string_view spec, DataSplit split, std::uint64_t seed) {
  const std::string_view trimmed = trim(spec);
  const std::size_t colon = trimmed.find(':');
  const std::string kind(trimmed.substr(0, colon));
  const std::string rest(colon == std::string_view::npos ? std::string_view()
                                                         : trimmed.substr(colon + 1));
  if (kind == "fashion-mnist")
    return load_fashion_mnist(rest.empty() ? fs::path(kFashionMnistDir) : fs::path(rest), split);
  if (kind == "mnist") {
    require(!rest.empty(), "data set '{}': give the directory, e.g. mnist:/data/mnist", spec);
    const fs::path dir(rest);
    return load_mnist_format(find_idx_file(dir, split, "images-idx3"),
                             find_idx_file(dir, split, "labels-idx1"),
                             fmt::format("{}/{}", trimmed, data_split_name(split)));
  }
  if (kind == "synthetic")
    return synthetic(rest.empty() ? std::vector<std::string>{} : telar::split(rest, ':'), spec,
                     split, seed);
  const std::string suggestion = closest_match(kind, {"fashion-mnist", "mnist", "synthetic"});
  fail("unknown data set '{}'{}; use one of: {}", spec,
       suggestion.empty() ? std::string() : fmt::format(" (did you mean '{}'?)", suggestion),
       fmt::join(data_spec_forms(), ", "));
}

}  // namespace telar::train
