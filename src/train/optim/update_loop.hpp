#pragma once
// The element loop shared by the optimizers' update rules. Each element's update is
// independent, so large tensors are split across the compute threads without changing any
// result; small ones stay on one thread, where starting threads would cost more than the work.
#include <cstdint>

namespace telar::train {

inline constexpr std::int64_t kParallelUpdateThreshold = std::int64_t{1} << 16;

template <typename Body>
inline void for_each_element(std::int64_t n, Body body) {
#pragma omp parallel for simd schedule(static) if (n >= kParallelUpdateThreshold)
  for (std::int64_t i = 0; i < n; ++i) body(i);
}

}  // namespace telar::train
