// --checkpoint-every: steps or a time, and what is refused.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "train/callbacks/checkpoint_callback.hpp"

using telar::train::parse_checkpoint_interval;

TEST(CheckpointInterval, StepsOrATimeInSecondsMinutesOrHours) {
  EXPECT_EQ(parse_checkpoint_interval("0").steps, 0);
  EXPECT_EQ(parse_checkpoint_interval("0").seconds, 0.0);
  EXPECT_EQ(parse_checkpoint_interval("500").steps, 500);
  EXPECT_EQ(parse_checkpoint_interval("500").seconds, 0.0);
  EXPECT_EQ(parse_checkpoint_interval("90s").seconds, 90.0);
  EXPECT_EQ(parse_checkpoint_interval("90s").steps, 0);
  EXPECT_EQ(parse_checkpoint_interval("10min").seconds, 600.0);
  EXPECT_EQ(parse_checkpoint_interval("10m").seconds, 600.0);
  EXPECT_EQ(parse_checkpoint_interval("2h").seconds, 7200.0);
}

TEST(CheckpointInterval, AnythingElseIsRefusedNamingTheFlag) {
  for (const char* bad : {"", "-5", "ten", "10 min", "10days", "1.5h", "s", "99999999999999999999"})
    try {
      parse_checkpoint_interval(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const telar::Error& e) {
      EXPECT_NE(std::string(e.what()).find("--checkpoint-every"), std::string::npos) << e.what();
    }
}
