#pragma once
// Loops split across the compute threads only when worth it. OpenMP's if() clause is not
// enough: with the condition false libgomp still starts a one-thread team and allocates it
// anew every time, which the steady-state training step must not do. So the decision is made
// before entering the parallel region.
#include <cstdint>

namespace telar {

template <typename Body>
inline void parallel_for(std::int64_t begin, std::int64_t end, bool split, const Body& body) {
  if (split && end - begin > 1) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = begin; i < end; ++i) body(i);
  } else {
    for (std::int64_t i = begin; i < end; ++i) body(i);
  }
}

// Same, for iterations of uneven cost (dynamic schedule, chunks of `chunk`).
template <typename Body>
inline void parallel_for_dynamic(std::int64_t begin, std::int64_t end, bool split, int chunk,
                                 const Body& body) {
  if (split && end - begin > 1) {
#pragma omp parallel for schedule(dynamic, chunk)
    for (std::int64_t i = begin; i < end; ++i) body(i);
  } else {
    for (std::int64_t i = begin; i < end; ++i) body(i);
  }
}

}  // namespace telar
