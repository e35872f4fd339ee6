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

// 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squared deviations sum to 32, sample variance 32 / 7.
TEST(Statistics, SummaryByHand) {
  const telar::SampleSummary s = telar::summarize({9, 2, 4, 4, 4, 5, 5, 7});
  EXPECT_EQ(s.count, 8u);
  EXPECT_DOUBLE_EQ(s.min, 2.0);
  EXPECT_DOUBLE_EQ(s.max, 9.0);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_NEAR(s.stddev, std::sqrt(32.0 / 7.0), 1e-12);
  EXPECT_NEAR(s.cv, std::sqrt(32.0 / 7.0) / 5.0, 1e-12);
  EXPECT_NEAR(s.p90, 7.0 + 0.3 * 2.0, 1e-12);  // rank 6.3 of 0..7
  EXPECT_DOUBLE_EQ(telar::summarize({3.0}).stddev, 0.0);
}
