#pragma once
// How the axes of an ONNX tensor are made of the axes of the telar value that holds it.
//
// telar keeps the batch as the first axis of every value. PyTorch's sequence-first attention
// (nn.MultiheadAttention, in torchvision's vision transformers and nn.Transformer) moves the
// batch off it (Transpose [1, 0, 2] to [L, B, E]) and merges it with the heads (Reshape to
// [L, B*H, d]). The importer follows such a tensor as a view of a batch-first value: the file's
// axis i is the value's axes groups[i], major to minor, merged; the file's tensor is the value
// permuted to the groups' order and reshaped.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/shape.hpp"

namespace telar::onnx {

using AxisGroups = std::vector<std::vector<int>>;

// Axis i is the value's axis i alone: the file's tensor is the value itself.
AxisGroups identity_groups(std::size_t rank);
// The value's axes in the order the file's axes list them.
std::vector<int> flattened(const AxisGroups& groups);

// A dimension with the batch size kept symbolic: `size`, times the batch size where `batch`.
struct SymbolicDim {
  std::int64_t size = 1;
  bool batch = false;
  bool operator==(const SymbolicDim&) const = default;
};

// The file's dimensions of a view of a value of shape `dims` (dims[0] the batch, whatever it
// holds).
std::vector<SymbolicDim> view_dims(const Shape& dims, const AxisGroups& groups);

// A Reshape of a view as a split of the value's axes and new groups: the value reshaped to
// `dims` (each axis split in place into consecutive ones, the batch never) holds the target with
// the view `groups`.
struct Regrouped {
  Shape dims;
  AxisGroups groups;
};

// The Reshape of the view (`dims`, `groups`) to `target` (every size given, none inferred), or
// nothing where the target's boundaries cannot be made by splitting the value's axes: a
// dimension that would cut the batch, or take part of one axis with part of another in a way
// no split gives.
std::optional<Regrouped> regroup(const Shape& dims, const AxisGroups& groups,
                                 const std::vector<SymbolicDim>& target);

}  // namespace telar::onnx
