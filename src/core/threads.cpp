#include "core/threads.hpp"

#include <omp.h>

#include <algorithm>
#include <thread>

#include "core/error.hpp"

namespace telar {

int hardware_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

int max_compute_threads() { return std::max(1024, 4 * hardware_threads()); }

void set_compute_threads(int n) {
  if (n > max_compute_threads())
    fail("{} compute threads is more than telar allows ({}); this machine has {} cores, use at "
         "most that many",
         n, max_compute_threads(), hardware_threads());
  omp_set_num_threads(n <= 0 ? hardware_threads() : n);
}

int compute_threads() { return omp_get_max_threads(); }

void on_each_compute_thread(const std::function<void()>& body) {
#pragma omp parallel num_threads(compute_threads())
  body();
}

}  // namespace telar
