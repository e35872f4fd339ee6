#include "adapt/dense_lu.hpp"

#include <cmath>
#include <limits>

#include "core/blas.hpp"
#include "core/error.hpp"

namespace telar::adapt {

namespace {

// Factors the row-major `a` in place (LAPACK sees its transpose, which has the same
// determinant); the pivots, or nothing for a singular matrix.
bool factor(std::vector<double>& a, std::size_t n, std::vector<int>& pivots) {
  require(a.size() == n * n, "internal: a {}-element matrix is not {} x {}", a.size(), n, n);
  require(n <= 46340, "internal: a {} x {} system is too large to factor", n, n);
  const int size = static_cast<int>(n);
  pivots.assign(n, 0);
  const int info = blas::dgetrf(size, a.data(), pivots.data());
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
  const int info = blas::dgetrs('T', static_cast<int>(n), a.data(), pivots.data(), b.data());
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
