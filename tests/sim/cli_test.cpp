// telar sim end to end: STONNE's syntax, configuration and tile files, the files it writes,
// the energy command, and bad input (one-line errors, exit status 2, no partial files).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
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

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::string w;
  for (char c : s) {
    if (c == ' ') {
      if (!w.empty()) out.push_back(w);
      w.clear();
    } else {
      w += c;
    }
  }
  if (!w.empty()) out.push_back(w);
  return out;
}

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<fs::path> files_in(const std::string& dir, const std::string& ext) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ext) out.push_back(e.path());
  return out;
}

const std::string kG01 =
    "-DenseGEMM -M=20 -N=20 -K=256 -num_ms=256 -dn_bw=64 -rn_bw=64 -T_K=64 -T_M=2 -T_N=1";

TEST(SimCli, ReproducesStonneAndWritesItsFiles) {
  const std::string dir = fresh_temp_dir("sim_cli_files");
  const auto r = run_telar(with({"sim", "--out", dir, "--json"}, words(kG01)));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(last_line(r.out));
  EXPECT_EQ(j["cycles"], 6200);
  EXPECT_EQ(j["gb_reads"], 108720);
  EXPECT_EQ(j["gb_writes"], 1600);
  EXPECT_GT(j["utilization"].get<double>(), 0.0);
  EXPECT_LT(j["utilization"].get<double>(), 1.0);
  EXPECT_GT(j["energy"].get<double>(), 0.0);
  EXPECT_NE(r.out.find("6200 cycles"), std::string::npos) << "summary line: " << r.out;
  const auto counters = files_in(dir, ".counters");
  const auto stats = files_in(dir, ".txt");
  ASSERT_EQ(counters.size(), 1u);
  ASSERT_EQ(stats.size(), 1u);
  const std::string text = telar::read_file(counters[0]);
  EXPECT_EQ(text.substr(0, 12), "CYCLES=6200\n");
  EXPECT_NE(text.find("[GlobalBuffer]\nGLOBALBUFFER READ=108720 WRITE=1600\n"), std::string::npos);
  for (const char* section : {"[DSNetwork]", "[MSNetwork]", "[ReduceNetwork]", "[CollectionBus]"})
    EXPECT_NE(text.find(section), std::string::npos) << section;
  const auto s = nlohmann::json::parse(telar::read_file(stats[0]));
  EXPECT_EQ(s["GlobalStats"]["N_cycles"], 6200);
  EXPECT_EQ(s["SDMemoryStats"]["N_SRAM_psum_reads"], 1200);
  EXPECT_EQ(s["TileConfiguration"]["VN_Size"], 65);
  EXPECT_EQ(s["TileConfiguration"]["Num_VNs"], 2);
  EXPECT_EQ(counters[0].filename().string().rfind(
                "output_stats_layer_TestLayer_architecture_MSes_256_dnbw_64_rn_bw_64", 0),
            0u);

  // A second run in the same directory never collides with the first.
  const auto again =
      run_telar(with({"sim", "--out", dir, "--exact-cycle-loop", "--json"}, words(kG01)));
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(count_files(dir), 4);
  EXPECT_EQ(nlohmann::json::parse(last_line(again.out))["cycles"], 6200);

  // The energy command reads the counters file back to the same total.
  const auto e = run_telar(
      {"sim", "energy", "--table", kConfigs + "energy_model.txt", counters[0].string(), "--json"});
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_NEAR(nlohmann::json::parse(last_line(e.out))["total_energy"].get<double>(),
              j["energy"].get<double>(), 1e-6 * j["energy"].get<double>());
  fs::remove_all(dir);
}

TEST(SimCli, ConfigFilesAndTileFiles) {
  const std::string dir = fresh_temp_dir("sim_cli_cfg");
  // maeri_256mses_64_bw.cfg: 256 multipliers, dn/rn 64, accumulation buffer: reference g02.
  auto r =
      run_telar({"sim", "--out", dir, "--json", "--config", kConfigs + "maeri_256mses_64_bw.cfg",
                 "-DenseGEMM", "-M=20", "-N=20", "-K=256", "-T_K=64", "-T_M=2", "-T_N=1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(last_line(r.out))["cycles"], 3740);
  // The TPU configuration: reference t01.
  r = run_telar({"sim", "--out", dir, "--json", "--config", kConfigs + "tpu_16_16_pes.cfg",
                 "-DenseGEMM", "-M=16", "-N=16", "-K=32", "-T_M=16", "-T_N=16", "-T_K=1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(last_line(r.out))["cycles"], 67);
  // A CONV tile file (STONNE's keys, T_X' with an apostrophe): reference c01.
  const std::string tile = dir + "/tile.txt";
  telar::write_file_atomic(
      tile, "tile_type=\"CONV\"\nT_R=3\nT_S=3\nT_C=1\nT_K=1\nT_G=1\nT_N=1\nT_X'=3\nT_Y'=1\n");
  r = run_telar({"sim", "--print", "--json"});  // unknown option
  EXPECT_EQ(r.status, 2);
  r = run_telar(with({"sim", "--out", dir, "--json", "--tile", tile},
                     words("-CONV -R=3 -S=3 -C=6 -K=6 -G=1 -N=1 -X=10 -Y=10 -strides=1 -num_ms=64 "
                           "-dn_bw=8 -rn_bw=8")));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(last_line(r.out));
  EXPECT_EQ(j["cycles"], 4529);
  EXPECT_EQ(j["gb_reads"], 7884);
  EXPECT_EQ(j["gb_writes"], 2304);
  fs::remove_all(dir);
}

TEST(SimCli, MapperChoosesALegalTile) {
  const std::string dir = fresh_temp_dir("sim_cli_auto");
  for (const std::string how : {"auto", "auto:energy", "auto:edp"}) {
    const auto r = run_telar({"sim", "--out", dir, "--json", "--tile", how, "--config",
                              kConfigs + "maeri_128mses_64_bw.cfg", "-CONV", "-R=3", "-S=3", "-C=8",
                              "-K=8", "-X=8", "-Y=8"});
    ASSERT_EQ(r.status, 0) << how << ": " << r.err;
    EXPECT_GT(nlohmann::json::parse(last_line(r.out))["cycles"].get<long long>(), 0) << how;
  }
  const auto stonne_way =
      run_telar({"sim", "--out", dir, "-FC", "-M=8", "-N=16", "-K=64", "-num_ms=64", "-dn_bw=16",
                 "-rn_bw=16", "-accumulation_buffer=1", "-generate_tile=performance"});
  EXPECT_EQ(stonne_way.status, 0) << stonne_way.err;
  fs::remove_all(dir);
}

TEST(SimCli, BadInputIsOneLineAndExitTwo) {
  const std::string dir = fresh_temp_dir("sim_cli_bad");
  auto check = [&](const std::vector<std::string>& args, const std::string& needle) {
    const auto r = run_telar(with({"sim", "--out", dir}, args));
    EXPECT_EQ(r.status, 2) << needle << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  };
  // A tile that does not fit: names the constraint and suggests a legal tile.
  check(words("-DenseGEMM -M=20 -N=20 -K=256 -num_ms=64 -dn_bw=16 -rn_bw=16 -T_K=64 -T_M=2 -T_N=1"),
        "a legal tile is");
  check(words("-DenseGEMM -M=20 -num_ms=100"), "power of two");
  check(words("-DenseGEMM -M=20 -dn_bww=4"), "did you mean -dn_bw");
  check(words("-SparseGEMM -M=4 -KN_sparsity=150"), "between 0 and 100");
  check(words("-CONV -R=3 -S=3 -C=6 -K=4 -G=4 -X=8 -Y=8"), "not a multiple of G");
  check({"--config", dir + "/missing.cfg", "-FC", "-M=2"}, "missing.cfg");
  check({"--tile", dir + "/missing.txt", "-FC", "-M=2"}, "missing.txt");
  check({"--tile", "auto:fastest", "-FC", "-M=2"}, "performance, energy or edp");
  check(words("-DenseGEMM -M=8 -N=8 -K=8 -mn_type=OS_MESH -ms_rows=4 -ms_cols=4 -dn_bw=8"),
        "TEMPORALRN");
  // An array larger than the engines index (65536 x 65536 overflowed an int and crashed), and
  // one larger than any machine of ours holds (2^25 multipliers at ~3 KB: ~100 GB).
  check(words("-DenseGEMM -M=16 -N=16 -K=8 -mn_type=OS_MESH -rn_type=TEMPORALRN "
              "-mem_ctrl=TPU_OS_DENSE -ms_rows=65536 -ms_cols=65536 -dn_bw=16 -rn_bw=16"),
        "more than telar simulates");
  check(words("-FC -M=4 -N=4 -K=8 -num_ms=33554432 -dn_bw=16 -rn_bw=16"), "GB this machine");
  // A layer name too long for the stats file names (was exit 1, "internal error: filesystem").
  check({"-DenseGEMM", "-M=4", "-N=4", "-K=8", "-layer_name=" + std::string(300, 'a')},
        "300 characters");
  EXPECT_EQ(count_files(dir), 0) << "no partial output files";
  // --out that is a regular file.
  const std::string file = dir + "/not_a_dir";
  telar::write_file_atomic(file, "x");
  const auto r = run_telar(with({"sim", "--out", file}, words(kG01)));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("Not a directory"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

TEST(SimCli, PrintStatsOffWritesNothing) {
  const std::string dir = fresh_temp_dir("sim_cli_quiet");
  const auto r =
      run_telar(with({"sim", "--out", dir, "--json"}, with(words(kG01), {"-print_stats=0"})));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count_files(dir), 0);
  EXPECT_EQ(nlohmann::json::parse(last_line(r.out))["cycles"], 6200);
  fs::remove_all(dir);
}

TEST(SimCli, ExplainsTilesOnWhichStonneComputesWrongValues) {
  // Stride 2 with T_Y'=3: STONNE's controller sends zeros for part of the window.
  const std::string dir = fresh_temp_dir("sim_cli_wrong");
  const auto r = run_telar(with(
      {"sim", "--out", dir}, words("-CONV -R=3 -S=3 -C=1 -K=1 -X=7 -Y=7 -strides=2 -T_R=3 -T_S=3 "
                                   "-T_Y_=3 -num_ms=64 -dn_bw=8 -rn_bw=8 -accumulation_buffer=1")));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("as STONNE does"), std::string::npos) << r.err;
  EXPECT_EQ(count_files(dir), 2) << "the counts are still written";
  fs::remove_all(dir);
}

TEST(SimCli, HelpAndUsage) {
  auto r = run_telar({"sim", "--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("-DenseGEMM"), std::string::npos);
  r = run_telar({"sim", "energy", "--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("calculate_energy"), std::string::npos);
  r = run_telar({"sim"});
  EXPECT_EQ(r.status, 2);
  r = run_telar({"sim", "energy"});
  EXPECT_EQ(r.status, 2);
}

TEST(SimCli, SparseCommandsReproduceStonne) {
  const std::string dir = fresh_temp_dir("sim_cli_sparse");
  auto r = run_telar(with({"sim", "--out", dir, "--json"},
                          words("-SparseDense -M=20 -N=20 -K=256 -MK_sparsity=80 -T_N=4 -T_K=32 "
                                "-num_ms=128 -dn_bw=64 -rn_bw=64 -accumulation_buffer=1")));
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(last_line(r.out));
  EXPECT_EQ(j["cycles"], 720);
  EXPECT_EQ(j["gb_reads"], 21462);
  EXPECT_EQ(j["gb_writes"], 400);
  EXPECT_EQ(j["mk_nnz"], 1022);
  EXPECT_TRUE(j["output_correct"].get<bool>());
  const auto stats = nlohmann::json::parse(telar::read_file(j["stats_file"].get<std::string>()));
  EXPECT_EQ(stats["LayerConfiguration"]["Layer_Type"], "SPARSE_DENSE");
  EXPECT_EQ(stats["SDMemoryStats"]["N_SRAM_weight_reads"], 1022);
  EXPECT_EQ(stats["SDMemoryStats"]["N_reconfigurations"], 20);
  const std::string counters = telar::read_file(j["counters_file"].get<std::string>());
  EXPECT_EQ(counters.substr(0, 11), "CYCLES=720\n");
  EXPECT_NE(counters.find("GLOBALBUFFER READ=21462 WRITE=400"), std::string::npos);
  r = run_telar(with({"sim", "--out", dir, "--json"},
                     words("-SparseGEMM -M=16 -N=48 -K=64 -num_ms=64 -dn_bw=32 -rn_bw=32 "
                           "-MK_sparsity=70 -KN_sparsity=0 -dataflow=MK_STA_KN_STR")));
  ASSERT_EQ(r.status, 0) << r.err;
  j = nlohmann::json::parse(last_line(r.out));
  EXPECT_EQ(j["cycles"], 647);
  EXPECT_EQ(j["gb_reads"], 18525);
  EXPECT_EQ(j["gb_writes"], 768);
  // A shipped configuration and the mapper's tile.
  r = run_telar({"sim", "--out", dir, "--json", "--config", kConfigs + "magma_128mses_128_bw.cfg",
                 "--tile", "auto", "-SparseDense", "-M=8", "-N=32", "-K=300", "-MK_sparsity=90"});
  ASSERT_EQ(r.status, 0) << r.err;
  j = nlohmann::json::parse(last_line(r.out));
  EXPECT_EQ(j["gb_writes"], 8 * 32);
  EXPECT_EQ(j["gb_reads"], j["mk_nnz"].get<int>() * 33);
  fs::remove_all(dir);
}

TEST(SimCli, SparseOperandsFromMatrixMarketFiles) {
  const std::string dir = fresh_temp_dir("sim_cli_mtx");
  const std::string a = dir + "/a.mtx", b = dir + "/b.mtx";
  telar::write_file_atomic(a,
                           "%%MatrixMarket matrix coordinate real general\n% 3x5\n3 5 6\n"
                           "1 1 2.5\n1 4 -1\n2 2 3\n2 5 1\n3 3 4\n3 1 0.5\n");
  telar::write_file_atomic(b,
                           "%%MatrixMarket matrix coordinate pattern general\n5 4 7\n1 1\n2 2\n"
                           "3 3\n4 4\n5 1\n1 3\n2 4\n");
  const std::string out = dir + "/out";
  auto r = run_telar({"sim", "--out", out, "--json", "--mk", a, "--kn", b, "-SparseGEMM",
                      "-num_ms=16", "-dn_bw=4", "-rn_bw=4"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(last_line(r.out));
  EXPECT_EQ(j["mk_nnz"], 6);
  EXPECT_EQ(j["kn_nnz"], 7);
  EXPECT_EQ(j["weight_reads"], 6);  // MK is stationary: each non-zero once
  EXPECT_EQ(j["gb_writes"], 3 * 4);
  EXPECT_TRUE(j["output_correct"].get<bool>());
  r = run_telar({"sim", "--out", out, "--json", "--mk", a, "-SparseDense", "-N=8", "-T_N=2",
                 "-T_K=4", "-num_ms=16", "-dn_bw=4", "-rn_bw=4"});
  ASSERT_EQ(r.status, 0) << r.err;
  j = nlohmann::json::parse(last_line(r.out));
  EXPECT_EQ(j["gb_reads"], 6 * (1 + 8));
  EXPECT_EQ(j["gb_writes"], 3 * 8);
  fs::remove_all(dir);
}

TEST(SimCli, BadSparseInputIsOneLineAndExitTwo) {
  const std::string dir = fresh_temp_dir("sim_cli_sparse_bad");
  const std::string bad_header = dir + "/bad_header.mtx", out_of_range = dir + "/range.mtx";
  telar::write_file_atomic(bad_header,
                           "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n");
  telar::write_file_atomic(out_of_range,
                           "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 3 1.0\n");
  const std::string out = dir + "/out";
  auto check = [&](const std::vector<std::string>& args, const std::string& needle) {
    const auto r = run_telar(with({"sim", "--out", out}, args));
    EXPECT_EQ(r.status, 2) << needle << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  };
  check(words("-SparseDense -MK_sparsity=101"), "between 0 and 100");
  check(words("-SparseGEMM -KN_sparsity=-5"), "between 0 and 100");
  check({"--mk", bad_header, "-SparseGEMM"}, "coordinate");
  check({"--mk", out_of_range, "-SparseDense"}, "outside the 2x2 matrix");
  check({"--mk", dir + "/missing.mtx", "-SparseDense"}, "missing.mtx");
  check({"--mk", out_of_range, "-FC"}, "--mk and --kn");
  check({"--config", kConfigs + "maeri_256mses_128_bw.cfg", "-SparseDense"}, "MAGMA_SPARSE_DENSE");
  check({"--config", kConfigs + "magma_128mses_128_bw.cfg", "-SparseGEMM"}, "SIGMA_SPARSE_GEMM");
  check(words("-SparseDense -T_N=16 -T_K=16 -num_ms=64"), "exceed ms_size");
  check(words("-SparseGEMM -mem_ctrl=SPARSE_MAGIC"), "unknown memory controller");
  check(words("-SparseGEMM -rn_type=RING"), "unknown reduce network");
  EXPECT_EQ(count_files(out), 0) << "no partial output files";
  EXPECT_FALSE(fs::exists(out)) << "a bad .mtx left the --out directory it made";
  fs::remove_all(dir);
}

}  // namespace
