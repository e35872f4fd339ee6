// End-to-end tests of `telar dlrm` on the simulated hybrid accelerator: no arguments runs the
// thesis' DLRM(1); --backend sim:... gives the CPU's outputs and per-component figures equal to
// the sums of `telar sim` runs of every layer and table alone (the same shapes, tiles and bags:
// an independent path through the simulator's command line); the thesis preset's group 3
// scales as the thesis says without holding its 64 GB of tables; bad input. The whole preset
// (13 workloads, the thesis' invariants) is in dlrm_thesis_test.cpp (labelled slow).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "dlrm/data.hpp"
#include "run_command.hpp"

using telar::testing::count_files;
using telar::testing::fresh_temp_dir;
using telar::testing::last_line;
using telar::testing::run_shell;
using telar::testing::run_telar;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kConfigs = std::string(TELAR_SOURCE_DIR) + "/configs/";

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A CSV file as rows of fields (quoted fields may hold commas and "" quotes).
std::vector<std::map<std::string, std::string>> read_csv(const fs::path& p) {
  std::istringstream in(slurp(p));
  std::string line;
  auto fields = [](const std::string& l) {
    std::vector<std::string> out(1);
    bool quoted = false;
    for (std::size_t i = 0; i < l.size(); ++i) {
      const char c = l[i];
      if (quoted && c == '"' && i + 1 < l.size() && l[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        out.emplace_back();
      } else {
        out.back() += c;
      }
    }
    return out;
  };
  std::getline(in, line);
  const std::vector<std::string> header = fields(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    const auto f = fields(line);
    EXPECT_EQ(f.size(), header.size()) << line;
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < f.size(); ++i) row[header[i]] = f[i];
    rows.push_back(row);
  }
  return rows;
}

// "... T_M=1 T_N=64 T_K=4 ..." -> the value of `key`.
int number_after(const std::string& text, const std::string& key) {
  const auto at = text.find(key + "=");
  EXPECT_NE(at, std::string::npos) << key << " in " << text;
  return at == std::string::npos ? -1 : std::stoi(text.substr(at + key.size() + 1));
}

struct Figures {
  std::uint64_t cycles = 0, reads = 0, writes = 0;
};

Figures sim_cli(std::vector<std::string> args, const std::string& out) {
  args.insert(args.begin(), "sim");
  args.insert(args.end(), {"--out", out, "--json"});
  const auto r = run_telar(args);
  EXPECT_EQ(r.status, 0) << r.err;
  if (r.status != 0) return {};
  const json j = json::parse(last_line(r.out));
  return {j["cycles"].get<std::uint64_t>(), j["gb_reads"].get<std::uint64_t>(),
          j["gb_writes"].get<std::uint64_t>()};
}

void expect_bad_input(const telar::testing::CommandResult& r, const std::string& needle) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr: " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr: " << r.err;
}

}  // namespace

TEST(DlrmSimCli, NoArgumentsRunsTheThesisDlrm1OnTheHybridAccelerator) {
  const std::string dir = fresh_temp_dir("dlrm_sim_bare");
  // Really no arguments: the run directory lands under ./runs.
  const auto r = run_shell("cd " + dir + " && " + telar::testing::telar_binary() + " dlrm");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("DLRM(1) (validation)"), std::string::npos) << r.out;
  for (const char* row : {"EmbeddingBags", "Bottom MLP", "Top MLP", "total"})
    EXPECT_NE(r.out.find(std::string("\n") + row + " "), std::string::npos) << row << r.out;
  std::vector<fs::path> runs;
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "runs")) runs.push_back(e.path());
  ASSERT_EQ(runs.size(), 1u);
  const fs::path run = runs[0];
  for (const char* f : {"run.json", "report.html", "components.csv", "nodes.csv"})
    EXPECT_TRUE(fs::exists(run / f)) << f;
  const json j = json::parse(slurp(run / "run.json"));
  EXPECT_EQ(j["status"], "finished");
  const json& w = j["result"]["workloads"][0];
  EXPECT_EQ(w["name"], "DLRM(1)");
  // Spec §3.3: EmbeddingBag writes = T·B·d, reads = nnz·(1 + d).
  EXPECT_EQ(w["components"]["EmbeddingBags"]["gb_writes"], 5 * 20 * 32);
  EXPECT_EQ(w["components"]["EmbeddingBags"]["gb_reads"], w["lookups"].get<std::int64_t>() * 33);
  EXPECT_EQ(w["components"]["EmbeddingBags"]["calls"], 5);
  EXPECT_EQ(w["components"]["Bottom MLP"]["calls"], 3);
  EXPECT_EQ(w["components"]["Top MLP"]["calls"], 3);
  const std::string html = slurp(run / "report.html");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("Global Buffer writes"), std::string::npos);
  fs::remove_all(dir);
}

TEST(DlrmSimCli, ComponentsEqualTheSingleOperationCommandsAndOutputsEqualTheCpus) {
  const std::string dir = fresh_temp_dir("dlrm_sim_ops");
  const std::vector<std::string> model = {"dlrm",
                                          "--arch-embedding-size=2000-500",
                                          "--arch-sparse-feature-size=16",
                                          "--arch-mlp-bot=24-16",
                                          "--arch-mlp-top=16-8-1",
                                          "--data-size=12",
                                          "--mini-batch-size=12",
                                          "--num-indices-per-lookup=8",
                                          "--numpy-rand-seed=5",
                                          "--inference-only",
                                          "--json"};
  auto args = model;
  args.insert(args.end(), {"--backend", "sim:" + kConfigs + "hybrid_dlrm.toml", "--out",
                           dir + "/sim", "--stonne-files"});
  const auto r = run_telar(args);
  ASSERT_EQ(r.status, 0) << r.err;
  const json sim = json::parse(last_line(r.out));
  args = model;
  args.insert(args.end(), {"--backend", "cpu", "--out", dir + "/cpu"});
  const auto c = run_telar(args);
  ASSERT_EQ(c.status, 0) << c.err;
  const json cpu = json::parse(last_line(c.out));
  // The same probabilities give the same loss, to the last bit.
  EXPECT_EQ(sim["train"]["loss"].get<double>(), cpu["train"]["loss"].get<double>());

  // Every Linear again with `telar sim -FC`, on hybrid_dlrm.toml's MAERI, with its tile.
  std::map<std::string, Figures> expected;
  std::map<std::string, std::string> eb_tile;
  for (const auto& row : read_csv(dir + "/sim/nodes.csv")) {
    if (row.at("op") == "Linear") {
      const std::string& w = row.at("workload_shape");  // "FC M=12 N=16 K=24"
      const std::string& t = row.at("tile");            // "T_M=.. T_N=.. T_K=.. (mapper ...)"
      const Figures f = sim_cli(
          {"--config", kConfigs + "maeri_256mses_64_bw.cfg", "-FC",
           fmt::format("-M={}", number_after(w, "M")), fmt::format("-N={}", number_after(w, "N")),
           fmt::format("-K={}", number_after(w, "K")),
           fmt::format("-T_M={}", number_after(t, "T_M")),
           fmt::format("-T_N={}", number_after(t, "T_N")),
           fmt::format("-T_K={}", number_after(t, "T_K"))},
          dir + "/ops");
      Figures& e = expected[row.at("component")];
      e.cycles += f.cycles, e.reads += f.reads, e.writes += f.writes;
    } else if (row.at("op") == "EmbeddingBag") {
      eb_tile[row.at("node")] = row.at("tile");
    } else {
      EXPECT_EQ(row.at("target"), "host") << row.at("node");
    }
  }
  // Every table again with `telar sim -SparseDense` on the batch's bags (the generator is
  // deterministic: batch 0 of seed 5), written as Matrix Market files.
  const auto config = telar::dlrm::make_config(16, "2000-500", "24-16", "16-8-1", "dot", false);
  auto data = telar::dlrm::make_random_data(config, {12, 12}, {8, false}, 5);
  telar::dlrm::DlrmBatch batch;
  data->batch(0, batch);
  std::int64_t lookups = 0;
  for (std::int64_t t = 0; t < 2; ++t) {
    const auto bags = batch.bags(t);
    std::string mtx = "%%MatrixMarket matrix coordinate pattern general\n";
    mtx += fmt::format("12 {} {}\n", config.table_rows[t], bags.nnz);
    for (std::int64_t b = 0; b < 12; ++b)
      for (std::int64_t i = bags.begin(b); i < bags.end(b); ++i)
        mtx += fmt::format("{} {}\n", b + 1, bags.indices[i] + 1);
    const std::string file = fmt::format("{}/bags{}.mtx", dir, t);
    std::ofstream(file) << mtx;
    const std::string& tile = eb_tile.at(fmt::format("emb/{}", t));
    const Figures f = sim_cli({"--config", kConfigs + "magma_128mses_128_bw.cfg", "-SparseDense",
                               "-M=12", "-N=16", fmt::format("-K={}", config.table_rows[t]), "--mk",
                               file, fmt::format("-T_N={}", number_after(tile, "T_N")),
                               fmt::format("-T_K={}", number_after(tile, "T_K"))},
                              dir + "/ops");
    Figures& e = expected["EmbeddingBags"];
    e.cycles += f.cycles, e.reads += f.reads, e.writes += f.writes;
    lookups += bags.nnz;
  }
  EXPECT_EQ(sim["simulation"]["lookups"], lookups);
  ASSERT_EQ(expected.size(), 3u);
  for (const auto& [component, e] : expected) {
    SCOPED_TRACE(component);
    const json& got = sim["simulation"]["components"][component];
    EXPECT_EQ(got["cycles"].get<std::uint64_t>(), e.cycles);
    EXPECT_EQ(got["gb_reads"].get<std::uint64_t>(), e.reads);
    EXPECT_EQ(got["gb_writes"].get<std::uint64_t>(), e.writes);
  }
  EXPECT_EQ(expected["EmbeddingBags"].writes, 2u * 12 * 16);
  EXPECT_EQ(expected["EmbeddingBags"].reads, static_cast<std::uint64_t>(lookups * 17));
  // components.csv has the same figures.
  for (const auto& row : read_csv(dir + "/sim/components.csv"))
    if (expected.count(row.at("component"))) {
      EXPECT_EQ(std::stoull(row.at("cycles")), expected[row.at("component")].cycles);
    }
  // STONNE's files, one pair per call: the thesis' scripts sum CYCLES= over *emb*.counters.
  std::uint64_t counted = 0;
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir + "/sim/stonne")) {
    const std::string name = e.path().filename().string();
    ++files;
    if (name.find("_emb.") == std::string::npos || e.path().extension() != ".counters") continue;
    const std::string text = slurp(e.path());
    ASSERT_EQ(text.rfind("CYCLES=", 0), 0u) << name;
    counted += std::stoull(text.substr(7));
  }
  // 2 tables and 4 Linear layers (bottom 24-16, top 19-16-8-1): a .txt and a .counters each.
  EXPECT_EQ(files, 2 * (2 + 4));
  EXPECT_EQ(counted, expected["EmbeddingBags"].cycles);
  EXPECT_NE(r.out.find("EmbeddingBags"), std::string::npos);
  EXPECT_NE(slurp(dir + "/sim/metrics.csv").find(",simulation,EmbeddingBags cycles,"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(DlrmSimCli, ThesisGroupThreeScalesWithLookupsNotWithTheTables) {
  // 50 tables of 10M rows (64 GB of fp32): never materialised nor copied for the simulation.
  const std::string dir = fresh_temp_dir("dlrm_sim_g3");
  const auto r = run_telar({"dlrm", "--preset", "thesis", "--workloads",
                            "50-10M-20-100,50-10M-20-1000", "--out", dir, "--json", "--quiet"});
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(last_line(r.out));
  ASSERT_EQ(j["workloads"].size(), 2u);
  const json &l100 = j["workloads"][0]["components"], &l1000 = j["workloads"][1]["components"];
  // The thesis: EB writes depend on T and the data size only (= T·B·d); EB reads grow about
  // 10x from 100 to 1000 lookups (E[L] = 50.0 and 499.8, spec §3.2); the MLPs do not change.
  EXPECT_EQ(l100["EmbeddingBags"]["gb_writes"], 50 * 20 * 32);
  EXPECT_EQ(l1000["EmbeddingBags"]["gb_writes"], 50 * 20 * 32);
  const double ratio = l1000["EmbeddingBags"]["gb_reads"].get<double>() /
                       l100["EmbeddingBags"]["gb_reads"].get<double>();
  EXPECT_GT(ratio, 9.5);
  EXPECT_LT(ratio, 10.5);
  for (const char* mlp : {"Bottom MLP", "Top MLP"}) {
    EXPECT_EQ(l100[mlp]["gb_reads"], l1000[mlp]["gb_reads"]) << mlp;
    EXPECT_EQ(l100[mlp]["cycles"], l1000[mlp]["cycles"]) << mlp;
  }
  EXPECT_LT(j["max_rss_mb"].get<double>(), 1024.0);
  const auto comps = fs::path(dir) / "components.csv";
  EXPECT_EQ(read_csv(comps).size(), 2u * 5);  // every component of both workloads
  fs::remove_all(dir);
}

TEST(DlrmSimCli, TheReconstructedThesisTilesGiveTheThesisShareForDlrm1) {
  // configs/hybrid_dlrm_thesis_tiles.toml (docs/dlrm.md, "Against the thesis"): its tiles on
  // every layer, and DLRM(1)'s EmbeddingBags within the thesis' 35-40 % of the cycles.
  const std::string dir = fresh_temp_dir("dlrm_sim_tiles");
  const auto r = run_telar({"dlrm", "--preset", "thesis", "--workloads", "dlrm1", "--backend",
                            "sim:" + kConfigs + "hybrid_dlrm_thesis_tiles.toml", "--out", dir,
                            "--json", "--quiet"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const auto& row : read_csv(fs::path(dir) / "nodes.csv")) {
    if (row.at("op") == "Linear") {
      EXPECT_EQ(row.at("tile").substr(0, 18), "T_M=1 T_N=1 T_K=8 ") << row.at("node");
    }
    if (row.at("op") == "EmbeddingBag") {
      EXPECT_EQ(row.at("tile").substr(0, 10), "T_N=1 T_K=") << row.at("node");
    }
  }
  const double share =
      json::parse(last_line(r.out))["workloads"][0]["components"]["EmbeddingBags"]["cycle_share"]
          .get<double>();
  EXPECT_GE(share, 0.35);
  EXPECT_LE(share, 0.40);
  fs::remove_all(dir);
}

TEST(DlrmSimCli, BadInputIsOneLineExitTwoAndWritesNothing) {
  const std::string dir = fresh_temp_dir("dlrm_sim_bad");
  const std::string out = dir + "/out";
  auto bad = [&](std::vector<std::string> args, const std::string& needle) {
    args.insert(args.begin(), "dlrm");
    args.insert(args.end(), {"--out", out});
    SCOPED_TRACE(needle);
    expect_bad_input(run_telar(args), needle);
    EXPECT_EQ(count_files(out), 0);
  };
  std::ofstream(dir + "/missing.toml") << "[dense]\nconfig = \"nowhere.cfg\"\n";
  std::ofstream(dir + "/magma_as_dense.toml")
      << "[dense]\nconfig = \"" << kConfigs << "magma_128mses_128_bw.cfg\"\n";
  const std::vector<std::string> small = {"--arch-embedding-size=50-50", "--arch-mlp-bot=4-2",
                                          "--inference-only"};
  auto with = [&](std::vector<std::string> extra) {
    auto a = small;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  bad(with({"--backend", "sim:" + dir + "/missing.toml"}),
      "config '" + dir + "/nowhere.cfg' does not exist");
  bad(with({"--backend", "sim:" + dir + "/magma_as_dense.toml"}), "cannot run dense layers");
  bad(with({"--backend", "sim:" + dir + "/none.cfg"}), "no hardware configuration");
  bad(with({"--backend", "sim:" + kConfigs + "energy_model.txt"}), "name a STONNE .cfg file");
  bad(with({"--backend", "sim:"}), "name the accelerator");
  bad(with({"--backend", "cuda:0"}), "DLRM runs on cpu or on a simulated accelerator");
  bad(with({"--backend", "tpu"}), "unknown backend 'tpu'");
  bad(with({"--backend", "sim:" + kConfigs + "hybrid_dlrm.toml", "--benchmark=inference"}),
      "--benchmark times the CPU");
  bad(with({"--stonne-files"}), "--stonne-files needs --backend sim:");
  bad(with({"--workloads", "DLRM(1)"}), "--workloads needs --preset thesis");
  bad({"--preset", "centaur"}, "--preset: 'centaur' is not a preset");
  bad({"--preset", "thesis", "--workloads", "DLRM(2)"}, "'dlrm2' is not a thesis workload");
  bad({"--preset", "thesis", "--arch-mlp-bot=4-2"}, "--arch-mlp-bot cannot be combined");
  bad({"--preset", "thesis", "--backend", "cpu"}, "runs on a simulated accelerator");
  bad({"--preset", "thesis", "--backend", "sim:" + dir + "/missing.toml"}, "does not exist");
  bad({"--preset", "thesis", "--embedding-storage", "disk"}, "--embedding-storage: 'disk'");
  fs::remove_all(dir);
}
