#include "core/threads.hpp"

#include <omp.h>

#include <thread>

namespace telar {

int hardware_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

void set_compute_threads(int n) { omp_set_num_threads(n <= 0 ? hardware_threads() : n); }

int compute_threads() { return omp_get_max_threads(); }

}  // namespace telar
