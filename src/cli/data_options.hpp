#pragma once
// Data set options shared by train and eval: --data SPEC (train/data/data_spec.hpp), or
// explicit MNIST-format files, and a validation split.
#include <string>

#include "cli/common.hpp"
#include "graph/graph.hpp"
#include "train/data/dataset.hpp"
#include "train/data/fit.hpp"

namespace telar::cli {

struct DataOptions {
  std::string data = "fashion-mnist";
  std::string train_images, train_labels, test_images, test_labels;
  std::string validation;  // "" none, "0.1" fraction, "5000" count
  std::string fit;         // --fit; "": as the run was trained, else resize

  // `validation`: whether the command holds part of the training set out (--validation).
  void add_to(CLI::App& app, bool validation = true);
  // Whether data was given on this command line (--data or files).
  bool given() const;
  // Loads the training and test sets (throws telar::Error naming the file and the fix). Where
  // no data was given (neither --data nor files), the data of the run whose configuration is
  // `run_config` (its --data or files, as its options record them), else Fashion-MNIST.
  train::Dataset load_train(std::uint64_t seed, const nlohmann::json& run_config = {}) const;
  train::Dataset load_test(std::uint64_t seed, const nlohmann::json& run_config = {}) const;
  std::string describe() const;
  // The data options `run_config` records (its "data" and the data flags among its "options"),
  // replaced by those given here, if any: what a run made from that run's model records, so
  // that its eval, bench and quantize read the data it was made with (telar adapt).
  nlohmann::json recorded_in(const nlohmann::json& run_config) const;
  // How samples of another shape are fitted to a model's input: --fit, else as the run whose
  // configuration is `run_config` was trained, else by resizing.
  train::FitMode fit_mode(const nlohmann::json& run_config = {}) const;
  // `set` fitted to a model input of `input` (C x H x W) when its samples differ
  // (train/data/fit.hpp), by fit_mode(run_config).
  train::Dataset fitted(const train::Dataset& set, const Shape& input,
                        const nlohmann::json& run_config = {}) const;
  // `set` fitted to `model`'s input, after checking that the model has an output for each of
  // its classes (throws telar::Error naming both counts).
  train::Dataset fitted_for(const train::Dataset& set, const graph::Graph& model,
                            const nlohmann::json& run_config = {}) const;

 private:
  // These options, or where no data was given, the data options `run_config` records.
  DataOptions following(const nlohmann::json& run_config) const;
  const CLI::App* app_ = nullptr;  // where the options were parsed: which were given
};

}  // namespace telar::cli
