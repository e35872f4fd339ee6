#pragma once
// A tensor with a name: the unit in which optimizer state and checkpoints are exchanged, so
// that what is saved does not depend on ValueIds or on the order of a container.
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace telar::train {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

using NamedTensors = std::vector<NamedTensor>;

}  // namespace telar::train
