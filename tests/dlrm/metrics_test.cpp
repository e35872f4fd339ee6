#include "dlrm/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace telar::dlrm;

TEST(DlrmMetrics, AucByHand) {
  // Pairs (positive, negative): (0.35 vs 0.1) yes, (0.35 vs 0.4) no, (0.8 vs both) yes: 3/4.
  EXPECT_DOUBLE_EQ(roc_auc({0.1f, 0.4f, 0.35f, 0.8f}, {0, 0, 1, 1}), 0.75);
  // A tie between a positive and a negative counts one half: (0.5 vs 0.5) = 0.5, (0.5 vs 0.2)
  // = 1, positive 0.9 beats both: (0.5 + 1 + 1 + 1) / 4.
  EXPECT_DOUBLE_EQ(roc_auc({0.5f, 0.5f, 0.2f, 0.9f}, {1, 0, 0, 1}), 3.5 / 4);
  EXPECT_TRUE(std::isnan(roc_auc({0.1f, 0.2f}, {1, 1})));
}

TEST(DlrmMetrics, AccuracyRoundsTheProbability) {
  const float p[] = {0.2f, 0.7f, 0.5f, 0.51f};
  const float t[] = {0.0f, 1.0f, 0.0f, 0.3f};  // round(0.5) = 0 (to even), 0.51 -> 1 != 0.3
  EXPECT_EQ(count_correct(p, t, 4), 3);
}
