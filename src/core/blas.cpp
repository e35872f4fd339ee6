#include "core/blas.hpp"

#include "core/blas_module.hpp"
#include "core/module.hpp"

namespace telar::blas {

namespace {
// Loaded on the first call; a failed load throws and is tried again on the next call.
const BlasModuleTable& module() {
  static const BlasModuleTable& table = modules::load_table<BlasModuleTable>("blas");
  return table;
}
}  // namespace

int dgetrf(int n, double* a, int* pivots) {
  return module().dgetrf(n, a, pivots);
}

int dgetrs(char trans, int n, const double* a, const int* pivots, double* b) {
  return module().dgetrs(trans, n, a, pivots, b);
}

void dgemm(const double* a, const double* b, double* c, int n) {
  module().dgemm(a, b, c, n);
}

}  // namespace telar::blas
