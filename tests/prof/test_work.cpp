#include "test_work.hpp"

#include <time.h>

namespace telar::prof::testing {

std::int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t process_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

double spin_cpu_ns(std::int64_t ns) {
  const std::int64_t start = thread_cpu_ns();
  volatile double sink = 0;
  std::uint32_t seed = 1;
  while (thread_cpu_ns() - start < ns) sink = sink + small_matmul(16, seed++);
  return sink;
}

}  // namespace telar::prof::testing
