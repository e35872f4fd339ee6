// Multiplex scaling: raw × time_enabled / time_running, with hand-worked values.
#include "prof/scaling.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

using namespace telar::prof;

TEST(ProfScaling, NoMultiplexingLeavesTheCountAsItIs) {
  EXPECT_EQ(scale_count(12345, 1000, 1000), 12345);
  EXPECT_EQ(scale_count(0, 1000, 1000), 0);
}

TEST(ProfScaling, ScalesByEnabledOverRunningAndRounds) {
  EXPECT_EQ(scale_count(1000, 400, 100), 4000);  // on a counter a quarter of the time
  EXPECT_EQ(scale_count(10, 3, 2), 15);          // 10 × 3 / 2
  EXPECT_EQ(scale_count(7, 3, 2), 11);           // 10.5 rounds up
  EXPECT_EQ(scale_count(1, 3, 2), 2);            // 1.5 rounds up
  EXPECT_EQ(scale_count(5, 4, 3), 7);            // 6.67 rounds to 7
}

TEST(ProfScaling, AnEventThatNeverRanGivesZero) {
  EXPECT_EQ(scale_count(0, 5000, 0), 0);
}

TEST(ProfScaling, LargeCountsDoNotOverflow) {
  // 2^47 events over 10 s enabled, 2.5 s running: 2^49 exactly, past 64 bits in the product.
  const std::uint64_t raw = std::uint64_t{1} << 47;
  EXPECT_EQ(scale_count(raw, 10'000'000'000ull, 2'500'000'000ull), std::int64_t{1} << 49);
  EXPECT_EQ(scale_count(std::numeric_limits<std::uint64_t>::max(), 2, 1),
            std::numeric_limits<std::int64_t>::max());
}

TEST(ProfScaling, RunningFraction) {
  EXPECT_DOUBLE_EQ(running_fraction(400, 100), 0.25);
  EXPECT_DOUBLE_EQ(running_fraction(0, 0), 1.0);
}
