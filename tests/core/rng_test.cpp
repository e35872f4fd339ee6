#include "core/rng.hpp"

#include <gtest/gtest.h>

#include <cmath>

TEST(Rng, SameSeedSameStream) {
  telar::Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    auto x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    differs |= x != c.next_u64();
  }
  EXPECT_TRUE(differs);
}

TEST(Rng, UniformMomentsMatchTheory) {
  telar::Rng rng(7);
  const int n = 200000;
  double sum = 0, sum2 = 0;
  for (int i = 0; i < n; ++i) {
    double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sum2 += u * u;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.005);              // mean 1/2
  EXPECT_NEAR(sum2 / n - (sum / n) * (sum / n), 1.0 / 12.0, 0.002);  // variance 1/12
}

TEST(Rng, NormalMomentsMatchTheory) {
  telar::Rng rng(9);
  const int n = 200000;
  double sum = 0, sum2 = 0;
  for (int i = 0; i < n; ++i) {
    double z = rng.normal();
    sum += z;
    sum2 += z * z;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.01);
  EXPECT_NEAR(sum2 / n, 1.0, 0.01);
}

TEST(Rng, BelowIsInRangeAndCoversIt) {
  telar::Rng rng(1);
  int counts[7] = {};
  for (int i = 0; i < 7000; ++i) {
    auto v = rng.below(7);
    ASSERT_LT(v, 7u);
    counts[v]++;
  }
  for (int c : counts) EXPECT_GT(c, 800);
}

TEST(Rng, StateRoundTrip) {
  telar::Rng a(5);
  a.next_u64();
  telar::Rng b(0);
  b.set_state(a.state());
  EXPECT_EQ(a.next_u64(), b.next_u64());
}
