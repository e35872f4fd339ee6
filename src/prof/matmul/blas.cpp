// BLAS dgemm, the seed's NumPy analogue (NumPy's matmul calls it too).
#include <cblas.h>

#include "prof/matmul/kernels.hpp"

namespace telar::prof::matmul {

bool blas_available() {
  return true;
}

void blas_dgemm(const double* a, const double* b, double* c, std::int64_t n) {
  const int m = static_cast<int>(n);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0, a, m, b, m, 0.0, c, m);
}

}  // namespace telar::prof::matmul
