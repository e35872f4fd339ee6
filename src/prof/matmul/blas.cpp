// BLAS dgemm, the seed's NumPy analogue (NumPy's matmul calls it too): OpenBLAS through
// core/blas.hpp.
#include "core/blas.hpp"

#include "prof/matmul/kernels.hpp"

namespace telar::prof::matmul {

void blas_dgemm(const double* a, const double* b, double* c, std::int64_t n) {
  blas::dgemm(a, b, c, static_cast<int>(n));
}

}  // namespace telar::prof::matmul
