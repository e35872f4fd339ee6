#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace telar {

using Shape = std::vector<std::int64_t>;

// A graph-level dimension whose size is bound when a graph is compiled for a batch size.
inline constexpr std::int64_t kBatchDim = -1;
// A dimension whose size changes from call to call (e.g. the number of EmbeddingBag indices).
inline constexpr std::int64_t kDynamicDim = -2;

std::int64_t shape_numel(const Shape& shape);
std::string shape_str(const Shape& shape);  // "[128, 1, 28, 28]", "B" for kBatchDim, "?" dynamic
bool shape_is_concrete(const Shape& shape);
// NumPy's broadcasting of two shapes (aligned at the last dimension; a dimension of 1 stretches
// to the other's size), or nothing where they do not broadcast. kBatchDim matches only itself
// and 1.
std::optional<Shape> broadcast_shape(const Shape& a, const Shape& b);
// Replaces kBatchDim by batch; kDynamicDim stays.
Shape bind_batch(const Shape& shape, std::int64_t batch);

}  // namespace telar
