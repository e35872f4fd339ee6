#pragma once
// Real work for the profiler tests: small matrix products whose size sets how long a scope lasts.
#include <cstdint>
#include <vector>

namespace telar::prof::testing {

// C = A·B for n×n floats; returns a checksum so the work cannot be optimised away.
inline double small_matmul(int n, std::uint32_t seed) {
  std::vector<float> a(static_cast<std::size_t>(n * n)), b(a.size()), c(a.size(), 0.0f);
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& v : a) v = static_cast<float>((x = x * 1664525u + 1013904223u) >> 8) * 1e-7f;
  for (auto& v : b) v = static_cast<float>((x = x * 1664525u + 1013904223u) >> 8) * 1e-7f;
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      const float aik = a[static_cast<std::size_t>(i * n + k)];
      for (int j = 0; j < n; ++j)
        c[static_cast<std::size_t>(i * n + j)] += aik * b[static_cast<std::size_t>(k * n + j)];
    }
  double sum = 0;
  for (float v : c) sum += v;
  return sum;
}

// Busy work for about `ns` nanoseconds of this thread's CPU time.
double spin_cpu_ns(std::int64_t ns);

// This thread's CPU time (CLOCK_THREAD_CPUTIME_ID), an independent measure of task-clock.
std::int64_t thread_cpu_ns();

// CPU time of every thread of the process (CLOCK_PROCESS_CPUTIME_ID).
std::int64_t process_cpu_ns();

}  // namespace telar::prof::testing
