#pragma once
// The element loop shared by the optimizers' update rules. Each element's update is
// independent, so large tensors are split across the compute threads without changing any
// result; small ones stay on one thread, where starting threads would cost more than the work.
#include <cstdint>

#include "core/parallel.hpp"

namespace telar::train {

inline constexpr std::int64_t kParallelUpdateThreshold = std::int64_t{1} << 16;

template <typename Body>
inline void for_each_element(std::int64_t n, Body body) {
  parallel_for(0, n, n >= kParallelUpdateThreshold, body);
}

}  // namespace telar::train
