// Work shares: parsing of --balance and the integer split of a count.
#include <gtest/gtest.h>

#include <numeric>

#include "core/error.hpp"
#include "dist/balance.hpp"

using telar::dist::Balance;
using telar::dist::split_count;

TEST(SplitCount, ProportionalAndExact) {
  EXPECT_EQ(split_count(128, std::vector<double>{0.5, 0.5}), (std::vector<std::int64_t>{64, 64}));
  // 0.7 * 10 = 7, 0.3 * 10 = 3.
  EXPECT_EQ(split_count(10, std::vector<double>{0.7, 0.3}), (std::vector<std::int64_t>{7, 3}));
  // 100 / 3 = 33.33 each: one leftover sample goes to the lowest rank among equal remainders.
  EXPECT_EQ(split_count(100, std::vector<double>{1.0 / 3, 1.0 / 3, 1.0 / 3}),
            (std::vector<std::int64_t>{34, 33, 33}));
  // 0.8 * 5 = 4 and 0.2 * 5 = 1; 0.8 * 3 = 2.4 and 0.6: the larger remainder wins.
  EXPECT_EQ(split_count(5, std::vector<double>{0.8, 0.2}), (std::vector<std::int64_t>{4, 1}));
  EXPECT_EQ(split_count(3, std::vector<double>{0.8, 0.2}), (std::vector<std::int64_t>{2, 1}));
  // A small last batch can leave a worker empty.
  EXPECT_EQ(split_count(1, std::vector<double>{0.5, 0.5}), (std::vector<std::int64_t>{1, 0}));
  for (std::int64_t total : {0, 1, 7, 97, 1000}) {
    auto parts = split_count(total, std::vector<double>{0.61, 0.29, 0.1});
    EXPECT_EQ(std::accumulate(parts.begin(), parts.end(), std::int64_t{0}), total);
  }
}

TEST(Balance, ParsesTheForms) {
  EXPECT_EQ(Balance::parse("equal").initial_shares(4), (std::vector<double>{0.25, 0.25, 0.25, 0.25}));
  // factor:4 (the thesis' adjustment factor): the last worker gets 1/4 of each other's work.
  auto f = Balance::parse("factor:4").initial_shares(2);
  EXPECT_DOUBLE_EQ(f[0], 0.8);
  EXPECT_DOUBLE_EQ(f[1], 0.2);
  auto f0 = Balance::parse("factor:4@0").initial_shares(2);
  EXPECT_DOUBLE_EQ(f0[0], 0.2);
  auto w = Balance::parse("weights:3/1").initial_shares(2);
  EXPECT_DOUBLE_EQ(w[0], 0.75);
  EXPECT_TRUE(Balance::parse("auto").measured());
  EXPECT_TRUE(Balance::parse("dynamic").measured());
  EXPECT_FALSE(Balance::parse("factor:2").measured());
}

TEST(Balance, RejectsBadSpecs) {
  EXPECT_THROW(Balance::parse("equl"), telar::Error);
  EXPECT_THROW(Balance::parse("factor"), telar::Error);
  EXPECT_THROW(Balance::parse("factor:0"), telar::Error);
  EXPECT_THROW(Balance::parse("factor:x"), telar::Error);
  EXPECT_THROW(Balance::parse("auto:3"), telar::Error);
  EXPECT_THROW(Balance::parse("weights:1/-1"), telar::Error);
  EXPECT_THROW(Balance::parse("weights:1/1").initial_shares(3), telar::Error);
  EXPECT_THROW(Balance::parse("factor:2@5").initial_shares(2), telar::Error);
  try {
    Balance::parse("dynamc");
  } catch (const telar::Error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'dynamic'"), std::string::npos) << e.what();
  }
}

// The thesis' CPU+GPU run: a group slower than its fastest worker alone is said, once, with
// what to do; a group that gains is not.
TEST(Balance, GroupSlowerThanItsFastestWorkerAloneIsWarned) {
  const std::vector<double> alone = {33887.0, 7013.0};
  EXPECT_EQ(telar::dist::slower_than_alone_warning(39000.0, alone), "");
  // Within a quarter of the warm-up figure (which leaves out the optimizer step): no warning.
  EXPECT_EQ(telar::dist::slower_than_alone_warning(33887.0, alone), "");
  EXPECT_EQ(telar::dist::slower_than_alone_warning(0.76 * 33887.0, alone), "");
  EXPECT_NE(telar::dist::slower_than_alone_warning(0.74 * 33887.0, alone), "");
  const std::string w = telar::dist::slower_than_alone_warning(11954.0, alone);
  EXPECT_EQ(w, "the 2 workers trained 11954 samples/s together, less than worker 0 alone (33887 "
               "samples/s in the warm-up): exchanging gradients costs more than the other workers "
               "add; train on worker 0's device alone, or with a larger --batch-size");
  const std::vector<double> second_fastest = {700.0, 2900.0, 1000.0};
  EXPECT_NE(telar::dist::slower_than_alone_warning(2000.0, second_fastest).find("less than worker 1 alone"),
            std::string::npos);
  EXPECT_EQ(telar::dist::slower_than_alone_warning(100.0, std::vector<double>{}), "");  // nothing measured
}
