// DLRM's architecture flags: dash lists, the checks, the interaction width and the summary
// lines, against values worked out by hand from dlrm_s_pytorch.py's formulas.
#include "dlrm/config.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

using namespace telar;
using namespace telar::dlrm;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST(DlrmConfig, ThesisTestCommandPrintsTopMlp42) {
  // The thesis' test command: 4 tables, d = 32, bottom 64-32, top 64-1 (Fig. 55).
  const DlrmConfig c = make_config(32, "1000-1000-1000-1000", "64-32", "64-1", "dot", false);
  EXPECT_EQ(c.interaction_width(), 4 * 5 / 2 + 32);  // T(T+1)/2 pairs + d = 42
  EXPECT_EQ(c.top_layers(), (std::vector<std::int64_t>{42, 64, 1}));
  EXPECT_EQ(c.summary(),
            "Bottom MLP - [64 32]\nEmbedding Bags - [1000 1000 1000 1000]\nTop MLP - [42 64 1]\n");
  EXPECT_EQ(c.dense_features(), 64);
  EXPECT_EQ(c.table_bytes(), 4 * 1000 * 32 * 4);
}

TEST(DlrmConfig, InteractionWidthsByHand) {
  // Centaur's DLRM(1): 5 tables, bottom out 32: 5*6/2 + 32 = 47 (spec table of workloads).
  EXPECT_EQ(make_config(32, "1-1-1-1-1", "128-64-64-32", "128-64-1", "dot", false).top_layers(),
            (std::vector<std::int64_t>{47, 128, 64, 1}));
  // 50 tables: 50*51/2 + 32 = 1307.
  std::string fifty = "10";
  for (int t = 1; t < 50; ++t) fifty += "-10";
  EXPECT_EQ(make_config(32, fifty, "128-64-64-32", "128-64-1", "dot", false).interaction_width(),
            1307);
  // With the diagonal: (T+1)(T+2)/2 + d = 3*4/2 + 4 = 10; cat: (T+1) d = 12.
  EXPECT_EQ(make_config(4, "5-5", "3-4", "1", "dot", true).interaction_width(), 10);
  EXPECT_EQ(make_config(4, "5-5", "3-4", "1", "cat", false).interaction_width(), 12);
  // A bottom "MLP" of one width is the identity: the dense input goes straight to the
  // interaction.
  EXPECT_EQ(make_config(4, "5-5", "4", "2-1", "dot", false).interaction_width(), 3 + 4);
}

TEST(DlrmConfig, MlpParametersByHand) {
  // 16-8-4: 16*8+8 + 8*4+4 = 172; top [4*5/2... ] here T=2, d=4: width 3+4 = 7; 7-2-1:
  // 7*2+2 + 2*1+1 = 19.
  EXPECT_EQ(make_config(4, "5-5", "16-8-4", "2-1", "dot", false).mlp_parameters(), 172 + 19);
}

TEST(DlrmConfig, BadArchitecturesAreOneLineErrors) {
  const auto err = [](std::int64_t d, const char* e, const char* bot, const char* top,
                      const char* op = "dot") {
    return error_of([&] { make_config(d, e, bot, top, op, false); });
  };
  EXPECT_NE(
      err(16, "10-10", "13-32", "8-1")
          .find("--arch-sparse-feature-size 16 does not match the last width of --arch-mlp-bot 32"),
      std::string::npos);
  EXPECT_NE(err(32, "10--10", "13-32", "8-1").find("--arch-embedding-size: malformed list"),
            std::string::npos);
  EXPECT_NE(err(32, "10-x", "13-32", "8-1").find("malformed list"), std::string::npos);
  EXPECT_NE(err(32, "10-10", "13-32-", "8-1").find("--arch-mlp-bot: malformed list"),
            std::string::npos);
  EXPECT_NE(err(32, "10-0", "13-32", "8-1").find("sizes must be positive"), std::string::npos);
  EXPECT_NE(err(32, "-10", "13-32", "8-1").find("malformed list"), std::string::npos);
  EXPECT_NE(err(0, "10", "13-0", "8-1").find("--arch-mlp-bot: sizes must be positive"),
            std::string::npos);
  EXPECT_NE(err(-2, "10", "13-2", "8-1").find("--arch-sparse-feature-size"), std::string::npos);
  EXPECT_NE(err(32, "10", "13-32", "8-2").find("end it with 1"), std::string::npos);
  EXPECT_NE(err(32, "10", "13-32", "8-1", "sum").find("--arch-interaction-op: 'sum'"),
            std::string::npos);
  EXPECT_NE(err(32, "", "13-32", "8-1").find("empty list"), std::string::npos);
  for (const std::string& m : {err(16, "10-10", "13-32", "8-1"), err(32, "10--10", "13-32", "8-1")})
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
}
