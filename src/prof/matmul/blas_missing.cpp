// Built when no CBLAS library was found: the blas variant reports itself unavailable.
#include "core/error.hpp"
#include "prof/matmul/kernels.hpp"

namespace telar::prof::matmul {

bool blas_available() {
  return false;
}

void blas_dgemm(const double*, const double*, double*, std::int64_t) {
  fail("the blas variant needs OpenBLAS; install libopenblas-dev and rebuild telar");
}

}  // namespace telar::prof::matmul
