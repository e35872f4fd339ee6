#include "adapt/dense_lu.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"

extern "C" {
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info, std::size_t trans_len);
}

namespace telar::adapt {

namespace {

// Factors the row-major `a` in place (LAPACK sees its transpose, which has the same
// determinant); the pivots, or nothing for a singular matrix.
bool factor(std::vector<double>& a, std::size_t n, std::vector<int>& pivots) {
  require(a.size() == n * n, "internal: a {}-element matrix is not {} x {}", a.size(), n, n);
  require(n <= 46340, "internal: a {} x {} system is too large to factor", n, n);
  const int size = static_cast<int>(n);
  pivots.assign(n, 0);
  int info = 0;
  dgetrf_(&size, &size, a.data(), &size, pivots.data(), &info);
  require(info >= 0, "internal: LAPACK dgetrf rejected argument {}", -info);
  return info == 0;
}

}  // namespace

std::vector<double> solve_dense(std::vector<double> a, std::vector<double> b) {
  const std::size_t n = b.size();
  if (n == 0) return b;
  std::vector<int> pivots;
  require(factor(a, n, pivots), "the interpolation's system is singular (repeated points)");
  // The factors are of aᵀ: solve (aᵀ)ᵀ·x = b.
  const int size = static_cast<int>(n), one = 1;
  const char trans = 'T';
  int info = 0;
  dgetrs_(&trans, &size, &one, a.data(), &size, pivots.data(), b.data(), &size, &info, 1);
  require(info == 0, "internal: LAPACK dgetrs rejected argument {}", -info);
  return b;
}

double log_abs_determinant(std::vector<double> a, std::size_t n) {
  std::vector<int> pivots;
  if (!factor(a, n, pivots)) return -std::numeric_limits<double>::infinity();
  double log_det = 0.0;
  for (std::size_t i = 0; i < n; ++i) log_det += std::log(std::fabs(a[i * n + i]));
  return log_det;
}

}  // namespace telar::adapt
