#include "train/data/split.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "test_support.hpp"

using namespace telar::train;
using telar::train::testing::expect_error;

TEST(Split, FractionAndCountGiveTheRightSizes) {
  SplitIndices a = split_train_validation(1000, ValidationSize::of_fraction(0.1), 5);
  EXPECT_EQ(a.validation.size(), 100u);
  EXPECT_EQ(a.train.size(), 900u);
  SplitIndices b = split_train_validation(1000, ValidationSize::of_count(250), 5);
  EXPECT_EQ(b.validation.size(), 250u);
  EXPECT_EQ(b.train.size(), 750u);
  SplitIndices none = split_train_validation(10, ValidationSize::of_count(0), 5);
  EXPECT_TRUE(none.validation.empty());
  EXPECT_EQ(none.train.size(), 10u);
}

TEST(Split, PartsAreSortedDisjointAndCoverEverySample) {
  SplitIndices s = split_train_validation(500, ValidationSize::of_fraction(0.3), 42);
  EXPECT_TRUE(std::is_sorted(s.train.begin(), s.train.end()));
  EXPECT_TRUE(std::is_sorted(s.validation.begin(), s.validation.end()));
  std::vector<std::int64_t> all = s.train;
  all.insert(all.end(), s.validation.begin(), s.validation.end());
  std::sort(all.begin(), all.end());
  std::vector<std::int64_t> expected(500);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(all, expected);
}

TEST(Split, DeterministicBySeed) {
  auto a = split_train_validation(300, ValidationSize::of_count(30), 1);
  auto b = split_train_validation(300, ValidationSize::of_count(30), 1);
  auto c = split_train_validation(300, ValidationSize::of_count(30), 2);
  EXPECT_EQ(a.validation, b.validation);
  EXPECT_EQ(a.train, b.train);
  EXPECT_NE(a.validation, c.validation);
  // Not simply the first or last samples.
  EXPECT_NE(a.validation.back(), 29);
  EXPECT_NE(a.validation.front(), 270);
}

TEST(Split, ParseFractionOrCount) {
  EXPECT_DOUBLE_EQ(ValidationSize::parse("0.1").fraction, 0.1);
  EXPECT_EQ(ValidationSize::parse("0.1").count, -1);
  EXPECT_EQ(ValidationSize::parse("5000").count, 5000);
  EXPECT_EQ(ValidationSize::parse("5000").resolve(60000), 5000);
  EXPECT_EQ(ValidationSize::parse("0.25").resolve(60000), 15000);
}

TEST(Split, BadSizesAreClearErrors) {
  expect_error([] { ValidationSize::parse("1.5", "--validation"); },
               {"--validation", "1.5", "[0, 1)"});
  expect_error([] { ValidationSize::parse("-3"); }, {"negative"});
  expect_error([] { ValidationSize::parse("ten"); }, {"'ten'"});
  expect_error([] { split_train_validation(100, ValidationSize::of_count(100), 0); },
               {"leaves no training samples", "100"});
}
