#include "cli/data_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "cli/model_options.hpp"
#include "core/error.hpp"
#include "train/data/data_spec.hpp"
#include "train/data/mnist.hpp"

namespace telar::cli {

void DataOptions::add_to(CLI::App& app, bool with_validation) {
  app_ = &app;
  app.add_option("--data", data,
                 fmt::format("data set: {}", fmt::join(train::data_spec_forms(), " | ")));
  app.add_option("--train-images", train_images, "MNIST-format training images file");
  app.add_option("--train-labels", train_labels, "MNIST-format training labels file");
  app.add_option("--test-images", test_images, "MNIST-format test images file");
  app.add_option("--test-labels", test_labels, "MNIST-format test labels file");
  if (with_validation)
    app.add_option("--validation", validation,
                   "hold out part of the training set for per-epoch validation: a fraction "
                   "(0.1) or a count (5000)");
  app.add_option("--fit", fit,
                 "how samples are fitted to a model input of another size (--input): resize "
                 "(bilinear) or pad (centred in zeros); one channel is replicated to the "
                 "model's channels. Default: as the checkpoint's run was trained, else resize");
}

namespace {

train::Dataset load(const DataOptions& o, bool training, std::uint64_t seed) {
  const std::string& images = training ? o.train_images : o.test_images;
  const std::string& labels = training ? o.train_labels : o.test_labels;
  if (!images.empty() || !labels.empty()) {
    if (images.empty() || labels.empty())
      fail("--{0}-images and --{0}-labels go together; give both", training ? "train" : "test");
    return train::load_mnist_format(images, labels, training ? "train" : "test");
  }
  return train::load_dataset(o.data, training ? train::DataSplit::Train : train::DataSplit::Test,
                             seed);
}

// The options that say which data a command reads, and the fields they set (data_field).
constexpr std::array<std::string_view, 5> kDataFlags = {
    "--data", "--train-images", "--train-labels", "--test-images", "--test-labels"};

bool is_data_flag(std::string_view flag) {
  return std::find(kDataFlags.begin(), kDataFlags.end(), flag) != kDataFlags.end();
}

// The field of `o` that data flag `flag` sets, else nullptr.
std::string* data_field(DataOptions& o, std::string_view flag) {
  const std::array<std::string*, kDataFlags.size()> fields = {
      &o.data, &o.train_images, &o.train_labels, &o.test_images, &o.test_labels};
  for (std::size_t i = 0; i < kDataFlags.size(); ++i)
    if (flag == kDataFlags[i]) return fields[i];
  return nullptr;
}

// "--flag=value" -> "--flag".
std::string_view flag_of(std::string_view token) {
  return token.substr(0, token.find('='));
}

}  // namespace

bool DataOptions::given() const {
  return app_ && (app_->count("--data") > 0 || !train_images.empty() || !train_labels.empty() ||
                  !test_images.empty() || !test_labels.empty());
}

DataOptions DataOptions::following(const nlohmann::json& run_config) const {
  if (given() || !run_config.is_object()) return *this;
  DataOptions run = *this;
  // A preset's data is set in code, not recorded among the options: the run's resolved --data.
  if (run_config.contains("data") && run_config["data"].is_string())
    run.data = run_config["data"].get<std::string>();
  const nlohmann::json options = run_config.value("options", nlohmann::json::array());
  for (const auto& option : options.is_array() ? options : nlohmann::json::array()) {
    if (!option.is_string()) continue;
    const std::string text = option.get<std::string>();
    const auto eq = text.find('=');
    if (eq == std::string::npos) continue;
    if (std::string* field = data_field(run, flag_of(text))) *field = text.substr(eq + 1);
  }
  return run;
}

nlohmann::json DataOptions::recorded_in(const nlohmann::json& run_config) const {
  nlohmann::json config = run_config.is_object() ? run_config : nlohmann::json::object();
  if (!given()) return config;
  nlohmann::json options = nlohmann::json::array();
  if (config.contains("options") && config["options"].is_array())
    for (const auto& option : config["options"])
      if (!option.is_string() || !is_data_flag(flag_of(option.get<std::string>())))
        options.push_back(option);
  for (const std::string& token : options_to_keep(*app_))
    if (is_data_flag(flag_of(token))) options.push_back(token);
  config["options"] = options;
  config["data"] = describe();
  return config;
}

train::Dataset DataOptions::load_train(std::uint64_t seed, const nlohmann::json& run_config) const {
  return load(following(run_config), true, seed);
}
train::Dataset DataOptions::load_test(std::uint64_t seed, const nlohmann::json& run_config) const {
  return load(following(run_config), false, seed);
}

train::FitMode DataOptions::fit_mode(const nlohmann::json& run_config) const {
  if (!fit.empty()) return train::parse_fit_mode(fit, "--fit");
  if (run_config.contains("fit"))
    return train::parse_fit_mode(run_config["fit"].get<std::string>(), "the run's fit");
  return train::FitMode::Resize;
}

train::Dataset DataOptions::fitted(const train::Dataset& set, const Shape& input,
                                   const nlohmann::json& run_config) const {
  const train::FitMode mode = fit_mode(run_config);  // a bad --fit fails even where not needed
  return train::fit_samples(set, input, mode);
}

train::Dataset DataOptions::fitted_for(const train::Dataset& set, const graph::Graph& model,
                                       const nlohmann::json& run_config) const {
  const Shape& output = model.value(model.outputs().at(0)).shape;
  const std::int64_t outputs = output.empty() ? 0 : output.back();
  require(set.num_classes <= outputs,
          "{} has {} classes and model '{}' {} outputs; give data of at most {} classes, or a "
          "model trained on this data",
          set.name, set.num_classes, model.name(), outputs, outputs);
  return fitted(set, sample_input(model), run_config);
}

std::string DataOptions::describe() const {
  return train_images.empty() ? data : train_images;
}

}  // namespace telar::cli
