#pragma once
// Data set options shared by train and eval: --data SPEC (train/data/data_spec.hpp), or
// explicit MNIST-format files, and a validation split.
#include <string>

#include "cli/common.hpp"
#include "train/data/dataset.hpp"

namespace telar::cli {

struct DataOptions {
  std::string data = "fashion-mnist";
  std::string train_images, train_labels, test_images, test_labels;
  std::string validation;  // "" none, "0.1" fraction, "5000" count

  void add_to(CLI::App& app);
  // Loads the training and test sets (throws telar::Error naming the file and the fix).
  train::Dataset load_train(std::uint64_t seed) const;
  train::Dataset load_test(std::uint64_t seed) const;
  std::string describe() const;
};

}  // namespace telar::cli
