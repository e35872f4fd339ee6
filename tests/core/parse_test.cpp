#include "core/parse.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

using telar::Error;

TEST(Parse, IntList) {
  auto v = telar::parse_int_list("784-256-128-10", '-', "--model");
  EXPECT_EQ(v, (std::vector<std::int64_t>{784, 256, 128, 10}));
  EXPECT_THROW(telar::parse_int_list("784--10", '-', "x"), Error);
  EXPECT_THROW(telar::parse_int_list("784-a-10", '-', "x"), Error);
  EXPECT_THROW(telar::parse_int_list("784-0", '-', "x"), Error);
  EXPECT_THROW(telar::parse_int_list("", '-', "x"), Error);
}

TEST(Parse, IndexListAcceptsZero) {
  EXPECT_EQ(telar::parse_index_list("0,1,3", ',', "--gpus"), (std::vector<std::int64_t>{0, 1, 3}));
  try {
    telar::parse_index_list("0,-1", ',', "--gpus");
    FAIL() << "a negative index was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--gpus: indices must be 0 or more, got -1"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(telar::parse_index_list("0,,1", ',', "--gpus"), Error);
  EXPECT_THROW(telar::parse_index_list("", ',', "--gpus"), Error);
}

TEST(Parse, IntAndDouble) {
  EXPECT_EQ(telar::parse_int(" 12 ", "n"), 12);
  EXPECT_THROW(telar::parse_int("12x", "n"), Error);
  EXPECT_DOUBLE_EQ(telar::parse_double("0.05", "lr"), 0.05);
  EXPECT_THROW(telar::parse_double("nan", "lr"), Error);
}

TEST(Parse, ErrorNamesTheOption) {
  try {
    telar::parse_int("abc", "--batch-size");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--batch-size"), std::string::npos);
  }
}

TEST(Parse, ClosestMatch) {
  EXPECT_EQ(telar::closest_match("mnist_cn", {"mlp", "mnist_cnn", "alexnet"}), "mnist_cnn");
  EXPECT_EQ(telar::closest_match("zzzzzz", {"mlp", "alexnet"}), "");
}

TEST(Parse, Dims) {
  EXPECT_EQ(telar::parse_dims("3x224x224", "--input"), (std::vector<std::int64_t>{3, 224, 224}));
}
