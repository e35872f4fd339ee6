// telar simulate end to end: the per-layer table and totals, the run directory (report.html,
// layers.csv, simulation.json, run.json, STONNE's files per call), a comparison of targets, and
// bad input (one-line errors, exit status 2, nothing written).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "core/files.hpp"
#include "e2e/run_command.hpp"

namespace {

namespace fs = std::filesystem;
using telar::testing::count_files;
using telar::testing::fresh_temp_dir;
using telar::testing::last_line;
using telar::testing::run_telar;

const std::string kConfigs = std::string(TELAR_SOURCE_DIR) + "/configs/";

TEST(SimulateCli, WholeModelWithReportAndComparison) {
  const std::string dir = fresh_temp_dir("simulate_cli");
  const std::string run = dir + "/run";
  const auto r = run_telar(
      {"simulate", "--model", "mlp:64-32-10", "--batch", "2", "--out", run, "--backend",
       "sim:" + kConfigs + "maeri_128mses_64_bw.cfg,sim:" + kConfigs + "tpu_16_16_pes.cfg",
       "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("fc1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("comparison:"), std::string::npos);
  EXPECT_NE(r.out.find("outputs equal the cpu backend's (max abs difference 0)"),
            std::string::npos);
  const auto j = nlohmann::json::parse(last_line(r.out));
  ASSERT_EQ(j["backends"].size(), 2u);
  for (const auto& b : j["backends"]) {
    EXPECT_GT(b["cycles"].get<long>(), 0);
    EXPECT_EQ(b["gb_writes"], 2 * (32 + 10));  // every output of the two Linear layers once
    EXPECT_EQ(b["simulated_layers"], 2);
    EXPECT_EQ(b["max_abs_diff_vs_cpu"], 0.0);
  }
  for (const char* f : {"report.html", "layers.csv", "simulation.json", "run.json"})
    EXPECT_TRUE(fs::exists(run + "/" + f)) << f;
  const std::string html = telar::read_file(run + "/report.html");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("Comparison"), std::string::npos);
  // Per-layer figures add up to the totals.
  const auto sim = nlohmann::json::parse(telar::read_file(run + "/simulation.json"));
  for (const auto& b : sim["backends"]) {
    long cycles = 0;
    for (const auto& l : b["layers"]) cycles += l["cycles"].get<long>();
    EXPECT_EQ(cycles, b["totals"]["cycles"].get<long>());
  }
  // STONNE's files: two per simulator call, per target.
  EXPECT_EQ(count_files(run + "/stonne/maeri_128mses_64_bw"), 4);
  EXPECT_EQ(count_files(run + "/stonne/tpu_16_16_pes"), 4);
  EXPECT_EQ(std::count_if(fs::directory_iterator(dir), fs::directory_iterator(),
                          [](const auto&) { return true; }),
            1)
      << "only the run directory, no work directory left behind";
  fs::remove_all(dir);
}

TEST(SimulateCli, BadInputIsOneLineAndExitTwo) {
  const std::string dir = fresh_temp_dir("simulate_cli_bad");
  telar::write_file_atomic(dir + "/missing.toml", "[dense]\nconfig = \"nowhere.cfg\"\n");
  telar::write_file_atomic(dir + "/bad.cfg", "[SDMemory]\ncontroller_type=\"WARP_DRIVE\"\n");
  const std::string run = dir + "/run";
  auto check = [&](std::vector<std::string> args, const std::string& needle) {
    args.insert(args.begin(), {"simulate", "--model", "mlp:16-4", "--out", run});
    const auto r = run_telar(args);
    EXPECT_EQ(r.status, 2) << needle << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(run)) << "no run directory for a failed command";
  };
  check({"--backend", "sim:" + dir + "/missing.toml"}, "nowhere.cfg' does not exist");
  check({"--backend", "sim:" + dir + "/bad.cfg"}, "unknown memory controller 'WARP_DRIVE'");
  check({"--backend", "sim:" + dir + "/none.cfg"}, "none.cfg");
  check({"--backend", "cpu"}, "sim: backends");
  check({"--backend", "sim:" + kConfigs + "maeri_128mses_64_bw.cfg", "--weight-sparsity", "1.5"},
        "--weight-sparsity");
  check({"--backend", "sim:" + kConfigs + "hybrid_dlrm.toml", "--weight-sparsity", "50"},
        "(50% is 0.5)");
  check({"--backend", "sim:" + kConfigs + "hybrid_dlrm.toml", "--weight-sparsity", "-0.1"},
        "at least 0");
  // An unknown reduction network and an unknown hybrid section.
  telar::write_file_atomic(dir + "/ring.cfg",
                           "[MSNetwork]\nms_size=64\n[ReduceNetwork]\ntype=\"RING\"\n"
                           "[SDMemory]\ncontroller_type=\"MAERI_DENSE_WORKLOAD\"\n");
  check({"--backend", "sim:" + dir + "/ring.cfg"}, "unknown reduce network 'RING'");
  telar::write_file_atomic(dir + "/gpu.toml", "[gpu]\nconfig = \"x.cfg\"\n");
  check({"--backend", "sim:" + dir + "/gpu.toml"}, "unknown section [gpu]");
  // A hybrid whose sparse accelerator is a dense one.
  fs::copy_file(kConfigs + "maeri_128mses_64_bw.cfg", dir + "/maeri.cfg");
  telar::write_file_atomic(dir + "/wrong.toml", "[sparse]\nconfig = \"maeri.cfg\"\n");
  check({"--backend", "sim:" + dir + "/wrong.toml"}, "cannot run EmbeddingBags");
  // A tile file that does not fit the layer: found while simulating, still nothing written.
  fs::create_directories(dir + "/tiles");
  telar::write_file_atomic(dir + "/tiles/fc1.txt", "tile_type=\"FC\"\nT_S=16\nT_K=16\nT_N=1\n");
  check({"--backend", "sim:" + kConfigs + "maeri_128mses_64_bw.cfg", "--tiles", dir + "/tiles"},
        "illegal tile");
  check({"--backend", "sim:" + kConfigs + "maeri_128mses_64_bw.cfg", "--tiles", dir + "/nope"},
        "not a directory");
  fs::remove_all(dir);
}

TEST(SimulateCli, OpsNoAcceleratorRunsAreReportedNotFatal) {
  const std::string dir = fresh_temp_dir("simulate_cli_host");
  const auto r = run_telar({"simulate", "--model", "mlp:16-4", "--out", dir + "/run", "--backend",
                            "sim:" + kConfigs + "magma_128mses_128_bw.cfg", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("runs on the host: sim:magma_128mses_128_bw has no accelerator"),
            std::string::npos)
      << r.out;
  const auto j = nlohmann::json::parse(last_line(r.out));
  EXPECT_EQ(j["cycles"], 0);
  EXPECT_EQ(j["simulated_layers"], 0);
  fs::remove_all(dir);
}

TEST(SimulateCli, WeightSparsitySendsLinearAndConvLayersToSigma) {
  const std::string dir = fresh_temp_dir("simulate_cli_pruned");
  auto layers = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"simulate",
                                     "--model",
                                     "mnist_cnn",
                                     "--batch",
                                     "1",
                                     "--backend",
                                     "sim:" + kConfigs + "hybrid_dlrm.toml",
                                     "--out",
                                     dir + "/run",
                                     "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_telar(args);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(last_line(r.out))["max_abs_diff_vs_cpu"], 0.0);
    const auto sim = nlohmann::json::parse(telar::read_file(dir + "/run/simulation.json"));
    std::map<std::string, nlohmann::json> by_name;
    for (const auto& l : sim["backends"][0]["layers"]) by_name[l["node"]] = l;
    fs::remove_all(dir + "/run");
    return by_name;
  };
  // Dense weights: the convolutions and Linear layers on MAERI, the rest on the host.
  auto dense = layers({});
  for (const char* n : {"conv1", "conv2", "fc1", "fc2"})
    EXPECT_EQ(dense[n]["target"], "maeri_256mses_64_bw") << n;
  EXPECT_EQ(dense["pool1"]["target"], "host");
  // Pruned to 75% zeros: the same layers on SIGMA, which reads each weight non-zero once
  // (fc2: 10 x 1024 weights, a quarter of them left).
  auto pruned = layers({"--weight-sparsity", "0.75"});
  for (const char* n : {"conv1", "conv2", "fc1", "fc2"}) {
    EXPECT_EQ(pruned[n]["target"], "sigma_128mses_128_bw") << n;
    EXPECT_NE(pruned[n]["workload"].get<std::string>().find("KN 75.0% sparse"), std::string::npos)
        << pruned[n]["workload"];
  }
  EXPECT_EQ(pruned["fc2"]["weight_reads"], 10 * 1024 / 4);
  EXPECT_EQ(pruned["pool1"]["target"], "host");
  fs::remove_all(dir);
}

TEST(SimulateCli, TileFilesPerLayerName) {
  const std::string dir = fresh_temp_dir("simulate_cli_tiles");
  fs::create_directories(dir + "/tiles");
  // fc1 (64 -> 32, batch 2) from a STONNE FC tile file; fc2 from the mapper.
  telar::write_file_atomic(dir + "/tiles/fc1.txt", "tile_type=\"FC\"\nT_S=16\nT_K=4\nT_N=1\n");
  const auto r = run_telar({"simulate", "--model", "mlp:64-32-10", "--batch", "2", "--tiles",
                            dir + "/tiles", "--backend",
                            "sim:" + kConfigs + "maeri_128mses_64_bw.cfg", "--out", dir + "/run"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto sim = nlohmann::json::parse(telar::read_file(dir + "/run/simulation.json"));
  const auto& l = sim["backends"][0]["layers"];
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0]["node"], "fc1");
  EXPECT_EQ(l[0]["tile"].get<std::string>().rfind("T_M=1 T_N=4 T_K=16 (tile file", 0), 0u)
      << l[0]["tile"];
  EXPECT_NE(l[2]["tile"].get<std::string>().find("(mapper"), std::string::npos) << l[2]["tile"];
  // The same layer and tile through `telar sim` gives the same figures.
  const auto one =
      run_telar({"sim", "--config", kConfigs + "maeri_128mses_64_bw.cfg", "--out", dir + "/one",
                 "--json", "-FC", "-M=2", "-N=32", "-K=64", "-T_M=1", "-T_N=4", "-T_K=16"});
  ASSERT_EQ(one.status, 0) << one.err;
  const auto j = nlohmann::json::parse(last_line(one.out));
  EXPECT_EQ(l[0]["cycles"], j["cycles"]);
  EXPECT_EQ(l[0]["gb_reads"], j["gb_reads"]);
  EXPECT_EQ(l[0]["gb_writes"], j["gb_writes"]);
  fs::remove_all(dir);
}

TEST(SimulateCli, Help) {
  const auto r = run_telar({"simulate", "--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("--weight-sparsity"), std::string::npos);
}

}  // namespace
