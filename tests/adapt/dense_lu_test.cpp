// The dense LU (LAPACK's): a solve that needs pivoting and is not symmetric (a row-major matrix
// given to a column-major library), a larger random system by its residual, determinants by
// hand, and singular matrices.
#include "adapt/dense_lu.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/rng.hpp"

using namespace telar;
using namespace telar::adapt;

namespace {

TEST(DenseLu, SolvesANonSymmetricSystemThatNeedsPivoting) {
  // [[0, 2, 1], [1, 0, 0], [3, 1, 1]] · [1, 2, 3] = [7, 1, 8].
  const std::vector<double> x = solve_dense({0, 2, 1, 1, 0, 0, 3, 1, 1}, {7, 1, 8});
  ASSERT_EQ(x.size(), 3u);
  EXPECT_NEAR(x[0], 1.0, 1e-12);
  EXPECT_NEAR(x[1], 2.0, 1e-12);
  EXPECT_NEAR(x[2], 3.0, 1e-12);
  EXPECT_THROW(solve_dense({1, 2, 2, 4}, {1, 2}), Error);
}

TEST(DenseLu, ARandomSystemHasASmallResidual) {
  const std::size_t n = 200;
  Rng rng(7);
  std::vector<double> a(n * n), b(n);
  for (double& v : a) v = rng.uniform(-1.0f, 1.0f);
  for (double& v : b) v = rng.uniform(-1.0f, 1.0f);
  const std::vector<double> x = solve_dense(a, b);
  double worst = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    double r = -b[i];
    for (std::size_t k = 0; k < n; ++k) r += a[i * n + k] * x[k];
    worst = std::max(worst, std::fabs(r));
  }
  EXPECT_LT(worst, 1e-9);
}

TEST(DenseLu, LogAbsDeterminantByHand) {
  EXPECT_NEAR(log_abs_determinant({2, 1, 1, 3}, 2), std::log(5.0), 1e-12);
  // A row swap is needed (zero first pivot); det = -4.
  EXPECT_NEAR(log_abs_determinant({0, 1, 0, 1, 0, 0, 0, 0, 4}, 3), std::log(4.0), 1e-12);
  // Not symmetric: det [[1, 2], [3, 4]] = -2.
  EXPECT_NEAR(log_abs_determinant({1, 2, 3, 4}, 2), std::log(2.0), 1e-12);
  EXPECT_EQ(log_abs_determinant({1, 2, 2, 4}, 2), -std::numeric_limits<double>::infinity());
}

}  // namespace
