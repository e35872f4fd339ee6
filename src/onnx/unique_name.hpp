#pragma once
// `base`, or `base#2`, `base#3`, ... : the first that `taken` does not claim. Names the import's
// nodes and weights and the export's tensors without collisions.
#include <fmt/format.h>

#include <string>

namespace telar::onnx {

template <typename Taken>
std::string unique_name(const std::string& base, Taken taken) {
  std::string name = base;
  for (int k = 2; taken(name); ++k) name = fmt::format("{}#{}", base, k);
  return name;
}

}  // namespace telar::onnx
