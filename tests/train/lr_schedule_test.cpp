#include "train/optim/lr_schedule.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "test_support.hpp"

using namespace telar::train;
using telar::train::testing::expect_error;

TEST(LrSchedule, Constant) {
  const LrSchedule s = LrSchedule::parse("constant", 0.01);
  EXPECT_EQ(s.at(0, 0), 0.01);
  EXPECT_EQ(s.at(123456, 40), 0.01);
  EXPECT_EQ(s.spec(), "constant");
}

TEST(LrSchedule, StepDecaysPerEpochs) {
  // lr 0.1 * 0.1^floor(epoch / 30)
  const LrSchedule s = LrSchedule::parse("step:30:0.1", 0.1);
  EXPECT_DOUBLE_EQ(s.at(999, 0), 0.1);
  EXPECT_DOUBLE_EQ(s.at(999, 29), 0.1);
  EXPECT_DOUBLE_EQ(s.at(999, 30), 0.01);
  EXPECT_DOUBLE_EQ(s.at(999, 59), 0.01);
  EXPECT_NEAR(s.at(999, 60), 0.001, 1e-15);
  EXPECT_EQ(s.spec(), "step:30:0.1");
}

TEST(LrSchedule, ExponentialLikeKerasExponentialDecay) {
  // The seed-001 schedule, ExponentialDecay(0.05, 100000, 0.96): 0.05 * 0.96^(step / 100000).
  const LrSchedule s = LrSchedule::parse("exp:100000:0.96", 0.05);
  EXPECT_DOUBLE_EQ(s.at(0, 0), 0.05);
  EXPECT_NEAR(s.at(100000, 0), 0.048, 1e-12);
  EXPECT_NEAR(s.at(200000, 0), 0.04608, 1e-12);
  EXPECT_NEAR(s.at(50000, 0), 0.05 * std::sqrt(0.96), 1e-12);  // 0.048989795
  EXPECT_NEAR(s.at(50000, 0), 0.0489897949, 1e-10);
  EXPECT_NEAR(s.at(469, 0), 0.0499904281, 1e-10);  // after one epoch of 469 batches
  EXPECT_EQ(s.spec(), "exp:100000:0.96");
}

TEST(LrSchedule, ExponentialStaircase) {
  const LrSchedule s = LrSchedule::parse("exp:10:0.5:staircase", 1.0);
  EXPECT_DOUBLE_EQ(s.at(9, 0), 1.0);
  EXPECT_DOUBLE_EQ(s.at(10, 0), 0.5);
  EXPECT_DOUBLE_EQ(s.at(25, 0), 0.25);
  EXPECT_EQ(s.spec(), "exp:10:0.5:staircase");
}

TEST(LrSchedule, SpecRoundTrips) {
  for (const char* spec : {"constant", "step:5:0.5", "exp:1000:0.9", "exp:7:0.25:staircase"})
    EXPECT_EQ(LrSchedule::parse(LrSchedule::parse(spec, 0.1).spec(), 0.1).spec(), spec);
}

TEST(LrSchedule, BadSpecsAreClearErrors) {
  expect_error([] { LrSchedule::parse("cosine", 0.1); },
               {"unknown learning-rate schedule 'cosine'", "exp:DECAY_STEPS:RATE"});
  expect_error([] { LrSchedule::parse("stpe:3:0.1", 0.1); }, {"did you mean 'step'"});
  expect_error([] { LrSchedule::parse("step:30", 0.1); }, {"takes 2 arguments, got 1"});
  expect_error([] { LrSchedule::parse("exp:0:0.96", 0.1); }, {"decay steps"});
  expect_error([] { LrSchedule::parse("exp:100:-1", 0.1); }, {"rate -1"});
  expect_error([] { LrSchedule::parse("exp:100:0.9:stairs", 0.1); }, {"'staircase'", "'stairs'"});
  expect_error([] { LrSchedule::parse("step:x:0.1", 0.1); }, {"'x'"});
  expect_error([] { LrSchedule::parse("constant", 0.0); }, {"--lr"});
}
