#pragma once
// Data sets named the way a user types them after --data:
//   fashion-mnist                  Fashion-MNIST from /usr/share/datasets/fashion-mnist
//   fashion-mnist:DIR              the same files under DIR
//   mnist:DIR                      any MNIST-format set in DIR, named like MNIST's files:
//                                  {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]
//   synthetic[:SAMPLES[:SHAPE[:CLASSES]]]   make_synthetic_classification, e.g.
//                                  synthetic:4096:1x28x28:10 (the defaults); the test split
//                                  has a fifth as many samples, from the same class prototypes
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "train/data/dataset.hpp"
#include "train/data/mnist.hpp"

namespace telar::train {

// The forms above, for help texts and error messages.
const std::vector<std::string>& data_spec_forms();

// Loads one split of the data set `spec`; `seed` only matters for synthetic data. Throws
// telar::Error for an unknown or malformed spec (listing the forms) and for bad files.
Dataset load_dataset(std::string_view spec, DataSplit split, std::uint64_t seed = 0);

}  // namespace telar::train
