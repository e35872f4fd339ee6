#include "core/statistics.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

using telar::percentile;

// Hand-derived: the samples sorted are 1 2 3 4 10; rank p*(n-1) interpolated.
TEST(Statistics, PercentileInterpolatesBetweenRanks) {
  const std::vector<double> v{4, 1, 10, 3, 2};
  EXPECT_DOUBLE_EQ(percentile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(percentile(v, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(percentile(v, 1.0), 10.0);
  EXPECT_DOUBLE_EQ(percentile(v, 0.9), 4.0 + 0.6 * 6.0);  // rank 3.6
  EXPECT_DOUBLE_EQ(percentile({7.0}, 0.3), 7.0);
}

TEST(Statistics, PercentileOfNothingOrOutsideZeroOneIsAnError) {
  EXPECT_THROW(percentile({}, 0.5), telar::Error);
  EXPECT_THROW(percentile({1.0, 2.0}, 1.5), telar::Error);
}
