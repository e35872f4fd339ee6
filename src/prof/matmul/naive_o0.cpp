// The naive product compiled at -O0 (set per file in CMakeLists.txt).
#include "prof/matmul/kernels.hpp"
#include "prof/matmul/naive_kernel.inc"

namespace telar::prof::matmul {

void naive_o0(const double* a, const double* b, double* c, std::int64_t n) {
  naive_matmul_kernel(a, b, c, n);
}

}  // namespace telar::prof::matmul
