#pragma once
// A tensor whose value the ONNX importer knows while importing: an initializer, a Constant, or
// what folding (constant_folds.hpp) made of them. Floats for weights, integers for shapes,
// indices and flags.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/shape.hpp"

namespace telar::onnx {

struct Constant {
  std::vector<std::int64_t> dims;
  bool integer = false;
  std::vector<float> f;
  std::vector<std::int64_t> i;
  // Per element: whether it is the batch size, the batch size times the element's value, or
  // otherwise computed from it (a shape read from the input is folded with the batch size
  // standing as 1, as telar binds it at run time); empty: none.
  enum class Batch : char { No, Is, Times, From };
  std::vector<Batch> batch;

  Batch batch_at(std::size_t k) const { return batch.empty() ? Batch::No : batch[k]; }
  bool depends_on_batch() const {
    return std::any_of(batch.begin(), batch.end(), [](Batch b) { return b != Batch::No; });
  }

  std::int64_t numel() const { return shape_numel(dims); }
  std::vector<std::int64_t> ints() const {
    if (integer) return i;
    std::vector<std::int64_t> out;
    for (float v : f) out.push_back(static_cast<std::int64_t>(v));
    return out;
  }
  float scalar() const { return integer ? static_cast<float>(i.at(0)) : f.at(0); }
};

// An integer constant of `dims` holding `values`.
inline Constant int_constant(std::vector<std::int64_t> values, std::vector<std::int64_t> dims) {
  Constant c;
  c.integer = true;
  c.i = std::move(values);
  c.dims = std::move(dims);
  return c;
}

}  // namespace telar::onnx
