// `telar dlrm --preset thesis`: the thesis' 13 workloads on its hybrid accelerator keep the
// invariants the thesis reports (spec §5.4, §11), the validation workloads' EmbeddingBag share
// is within the thesis' 35-40 %, and the whole preset stays under 2 GB resident. Labelled slow
// (all 13 workloads: about half a minute on one core).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "run_command.hpp"

using telar::testing::fresh_temp_dir;
using telar::testing::last_line;
using telar::testing::run_telar;
namespace fs = std::filesystem;
using nlohmann::json;

TEST(DlrmThesisCli, TheThirteenThesisWorkloadsKeepTheThesisInvariants) {
  const std::string dir = fresh_temp_dir("dlrm_sim_thesis");
  const auto r = run_telar({"dlrm", "--preset", "thesis", "--out", dir, "--json", "--quiet"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(last_line(r.out));
  ASSERT_EQ(j["workloads"].size(), 13u);
  std::map<std::string, json> w;
  for (const json& x : j["workloads"]) w[x["name"]] = x["components"];
  auto get = [&](const std::string& name, const char* comp, const char* what) {
    return w.at(name)[comp][what].get<std::uint64_t>();
  };
  const char* EB = "EmbeddingBags";
  // Spec §11's invariants. EB writes = T·B·d: group 2 = 4x group 1.
  for (const char* t : {"10", "25", "50"}) {
    const std::string g1 = std::string(t) + "-1M-20-100", g2 = std::string(t) + "-1M-80-100";
    EXPECT_EQ(get(g1, EB, "gb_writes"), std::stoull(t) * 20 * 32);
    EXPECT_EQ(get(g2, EB, "gb_writes"), 4 * get(g1, EB, "gb_writes"));
    for (const char* mlp : {"Bottom MLP", "Top MLP"})
      EXPECT_EQ(get(g2, mlp, "gb_writes"), 4 * get(g1, mlp, "gb_writes")) << mlp;
  }
  // G3 runs 1 and 3 write as G1 run 3; runs 2 and 4 as G2 run 3.
  for (const char* g3 : {"50-10M-20-100", "50-10M-20-1000"})
    EXPECT_EQ(get(g3, EB, "gb_writes"), get("50-1M-20-100", EB, "gb_writes"));
  for (const char* g3 : {"50-10M-80-100", "50-10M-80-1000"})
    EXPECT_EQ(get(g3, EB, "gb_writes"), get("50-1M-80-100", EB, "gb_writes"));
  // MLP writes equal across group 1; bottom reads independent of T; top reads grow with T.
  for (const char* mlp : {"Bottom MLP", "Top MLP"}) {
    EXPECT_EQ(get("10-1M-20-100", mlp, "gb_writes"), get("50-1M-20-100", mlp, "gb_writes"));
    EXPECT_EQ(get("50-10M-20-100", mlp, "gb_reads"), get("50-10M-20-1000", mlp, "gb_reads"));
    EXPECT_EQ(get("50-10M-80-100", mlp, "gb_reads"), get("50-10M-80-1000", mlp, "gb_reads"));
  }
  EXPECT_EQ(get("10-1M-20-100", "Bottom MLP", "gb_reads"),
            get("50-1M-20-100", "Bottom MLP", "gb_reads"));
  EXPECT_LT(get("10-1M-20-100", "Top MLP", "gb_reads"), get("25-1M-20-100", "Top MLP", "gb_reads"));
  EXPECT_LT(get("25-1M-20-100", "Top MLP", "gb_reads"), get("50-1M-20-100", "Top MLP", "gb_reads"));
  // The validation workloads' EmbeddingBags take 35-40 % of the cycles (the thesis, Fig. 40).
  for (const json& x : j["workloads"])
    if (x["name"] == "DLRM(1)" || x["name"] == "DLRM(3)") {
      const double share = x["components"][EB]["cycle_share"].get<double>();
      EXPECT_GE(share, 0.35) << x["name"];
      EXPECT_LE(share, 0.40) << x["name"];
    }
  EXPECT_LT(j["max_rss_mb"].get<double>(), 2048.0);
  fs::remove_all(dir);
}
