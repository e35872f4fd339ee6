// libtelar_blas.so: OpenBLAS's LAPACK and CBLAS behind core/blas.hpp's functions.
#include "core/blas_module.hpp"

#include <cblas.h>

#include <cstddef>

#include "core/module_entry.hpp"

extern "C" {
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info, std::size_t trans_len);
}

namespace telar::blas {
namespace {

int getrf(int n, double* a, int* pivots) {
  int info = 0;
  dgetrf_(&n, &n, a, &n, pivots, &info);
  return info;
}

int getrs(char trans, int n, const double* a, const int* pivots, double* b) {
  const int one = 1;
  int info = 0;
  dgetrs_(&trans, &n, &one, a, &n, pivots, b, &n, &info, 1);
  return info;
}

void gemm(const double* a, const double* b, double* c, int n) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
}

}  // namespace
}  // namespace telar::blas

TELAR_MODULE_ENTRY(telar::blas::BlasModuleTable{&telar::blas::getrf, &telar::blas::getrs,
                                                &telar::blas::gemm})
