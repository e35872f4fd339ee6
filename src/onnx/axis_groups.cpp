#include "onnx/axis_groups.hpp"

#include <utility>

namespace telar::onnx {

AxisGroups identity_groups(std::size_t rank) {
  AxisGroups groups(rank);
  for (std::size_t d = 0; d < rank; ++d) groups[d] = {static_cast<int>(d)};
  return groups;
}

std::vector<int> flattened(const AxisGroups& groups) {
  std::vector<int> order;
  for (const auto& g : groups) order.insert(order.end(), g.begin(), g.end());
  return order;
}

std::vector<SymbolicDim> view_dims(const Shape& dims, const AxisGroups& groups) {
  std::vector<SymbolicDim> out;
  for (const auto& g : groups) {
    SymbolicDim d;
    for (int axis : g) {
      if (axis == 0)
        d.batch = true;
      else
        d.size *= dims[static_cast<std::size_t>(axis)];
    }
    out.push_back(d);
  }
  return out;
}

std::optional<Regrouped> regroup(const Shape& dims, const AxisGroups& groups,
                                 const std::vector<SymbolicDim>& target) {
  const std::vector<int> order = flattened(groups);
  if (order.empty() || order.size() != dims.size() || target.empty()) return std::nullopt;
  // Walks the value's axes in the view's order, cutting each into the pieces the target's
  // dimensions take: pieces[axis] in order, and per target dimension the (axis, piece) it takes.
  std::vector<std::vector<std::int64_t>> pieces(dims.size());
  std::vector<std::vector<std::pair<int, std::size_t>>> taken(target.size());
  std::size_t i = 0;
  std::int64_t left = 0;  // what remains of axis order[i]
  auto size_of = [&](int axis) { return axis == 0 ? 1 : dims[static_cast<std::size_t>(axis)]; };
  auto advance = [&] {
    ++i;
    if (i < order.size()) left = size_of(order[i]);
  };
  left = size_of(order[0]);
  auto take = [&](std::size_t j, int axis, std::int64_t size) {
    pieces[static_cast<std::size_t>(axis)].push_back(size);
    taken[j].emplace_back(axis, pieces[static_cast<std::size_t>(axis)].size() - 1);
  };
  for (std::size_t j = 0; j < target.size(); ++j) {
    const auto [size, batch] = target[j];
    if (size < 1) return std::nullopt;
    std::int64_t have = 1;
    bool has_batch = false;
    while (have < size || (batch && !has_batch)) {
      if (i >= order.size() || size % have) return std::nullopt;
      const int axis = order[i];
      if (axis == 0) {
        if (!batch || has_batch) return std::nullopt;
        take(j, axis, 1);
        has_batch = true;
        advance();
        continue;
      }
      const std::int64_t want = size / have;
      if (left <= want) {
        if (want % left) return std::nullopt;
        take(j, axis, left);
        have *= left;
        advance();
      } else {
        // Only the batch may complete this dimension, and a longer axis comes first.
        if (want == 1 || left % want) return std::nullopt;
        take(j, axis, want);
        have *= want;
        left /= want;
      }
    }
    if (taken[j].empty()) {  // an axis of 1: the next one where it is of 1, else a new one
      const int axis = i < order.size() ? order[i] : order.back();
      if (axis == 0) return std::nullopt;
      take(j, axis, 1);
      if (i < order.size() && left == 1) advance();
    }
  }
  for (; i < order.size(); advance()) {  // axes of 1 left over join the last dimension
    if (order[i] == 0 || left != 1) return std::nullopt;
    take(target.size() - 1, order[i], 1);
  }
  Regrouped out;
  std::vector<std::size_t> first(dims.size());
  for (std::size_t axis = 0; axis < dims.size(); ++axis) {
    std::int64_t product = 1;
    for (auto p : pieces[axis]) product *= p;
    if (axis == 0 ? pieces[0].size() != 1 : product != dims[axis]) return std::nullopt;
    first[axis] = out.dims.size();
    for (auto p : pieces[axis]) out.dims.push_back(axis == 0 ? dims[0] : p);
  }
  for (const auto& t : taken) {
    std::vector<int> g;
    for (const auto& [axis, piece] : t)
      g.push_back(static_cast<int>(first[static_cast<std::size_t>(axis)] + piece));
    out.groups.push_back(std::move(g));
  }
  return out;
}

}  // namespace telar::onnx
