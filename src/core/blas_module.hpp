#pragma once
// The table of libtelar_blas.so (blas_module.cpp), which core/blas.cpp loads on first use.

namespace telar::blas {

struct BlasModuleTable {
  int (*dgetrf)(int n, double* a, int* pivots);
  int (*dgetrs)(char trans, int n, const double* a, const int* pivots, double* b);
  void (*dgemm)(const double* a, const double* b, double* c, int n);
};

}  // namespace telar::blas
