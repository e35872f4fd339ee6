// telar sim --cases FILE / --sweep NAME=V1,V2: many cases in one process, on several threads,
// each giving exactly what its own `telar sim` call gives (the figures are compared case by case
// with separate calls, and with STONNE's own figures where the case is a reference case).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/files.hpp"
#include "e2e/run_command.hpp"

namespace {

namespace fs = std::filesystem;
using telar::testing::fresh_temp_dir;
using telar::testing::last_line;
using telar::testing::run_telar;

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// summary.csv's rows as column -> value maps (the fields used here hold no commas).
std::vector<std::map<std::string, std::string>> summary_rows(const fs::path& csv) {
  std::istringstream in(telar::read_file(csv));
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  {
    std::istringstream h(line);
    for (std::string f; std::getline(h, f, ',');) header.push_back(f);
  }
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::istringstream r(line);
    std::map<std::string, std::string> row;
    std::size_t k = 0;
    for (std::string f; std::getline(r, f, ',') && k < header.size(); ++k) row[header[k]] = f;
    rows.push_back(row);
  }
  return rows;
}

// The figures of `telar sim LINE --json`, run alone.
nlohmann::json alone(const std::string& line) {
  std::vector<std::string> args{"sim", "-print_stats=0", "--json"};
  for (const std::string& w : words(line)) args.push_back(w);
  const auto r = run_telar(args);
  EXPECT_EQ(r.status, 0) << line << "\n" << r.err;
  return nlohmann::json::parse(last_line(r.out));
}

const std::vector<std::string> kLines = {
    // STONNE's G01 (6,200 cycles, 108,720 reads, 1,600 writes in STONNE).
    "-DenseGEMM -M=20 -N=20 -K=256 -num_ms=256 -dn_bw=64 -rn_bw=64 -T_K=64 -T_M=2 -T_N=1",
    "-CONV -R=3 -S=3 -C=8 -K=8 -X=10 -Y=10 -num_ms=64 -dn_bw=16 -rn_bw=16 -T_R=3 -T_S=3 -T_C=2 "
    "-T_K=2",
    "-FC -M=1 -N=32 -K=64 -num_ms=64 -dn_bw=16 -rn_bw=16 -T_K=16 -T_N=2",
    "-SparseDense -M=20 -N=20 -K=256 -MK_sparsity=80 -T_N=4 -T_K=32 -num_ms=128 -dn_bw=64 "
    "-rn_bw=64 -accumulation_buffer=1",
    "-DenseGEMM -M=16 -N=16 -K=32 -mn_type=OS_MESH -rn_type=TEMPORALRN -mem_ctrl=TPU_OS_DENSE "
    "-ms_rows=8 -ms_cols=8 -dn_bw=16 -rn_bw=16 -T_M=8 -T_N=8 -T_K=1",
};

}  // namespace

TEST(SimSweep, ACasesFileGivesWhatEachLineGivesAlone) {
  const std::string dir = fresh_temp_dir("sim_sweep_cases");
  std::ofstream(dir + "/cases.txt") << "# STONNE's scripts' lines, as they are\n"
                                    << "./stonne " << kLines[0] << "\n\n"
                                    << "telar sim " << kLines[1] << "  # a comment\n"
                                    << kLines[2] << "\n"
                                    << kLines[3] << "\n"
                                    << kLines[4] << "\n";
  const auto r = run_telar(
      {"sim", "--cases", dir + "/cases.txt", "--jobs", "2", "--out", dir + "/out", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(last_line(r.out));
  EXPECT_EQ(j["cases"], 5);
  EXPECT_EQ(j["failed"], 0);
  const auto rows = summary_rows(dir + "/out/summary.csv");
  ASSERT_EQ(rows.size(), kLines.size());
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < kLines.size(); ++i) {
    SCOPED_TRACE(kLines[i]);
    const nlohmann::json one = alone(kLines[i]);
    EXPECT_EQ(rows[i].at("case"), std::to_string(i + 1));
    EXPECT_EQ(rows[i].at("cycles"), std::to_string(one["cycles"].get<std::uint64_t>()));
    EXPECT_EQ(rows[i].at("gb_reads"), std::to_string(one["gb_reads"].get<std::uint64_t>()));
    EXPECT_EQ(rows[i].at("gb_writes"), std::to_string(one["gb_writes"].get<std::uint64_t>()));
    EXPECT_EQ(rows[i].at("output"), "correct");
    // Each case's STONNE files in a directory of its own.
    const fs::path stats = rows[i].at("stats_file");
    EXPECT_TRUE(fs::exists(stats));
    EXPECT_EQ(stats.parent_path().filename(), fs::path("case-000" + std::to_string(i + 1)));
    total += one["cycles"].get<std::uint64_t>();
  }
  EXPECT_EQ(rows[0].at("cycles"), "6200");  // STONNE's figure
  EXPECT_EQ(rows[0].at("source"), dir + "/cases.txt:2");
  EXPECT_EQ(rows[1].at("source"), dir + "/cases.txt:4");
  EXPECT_EQ(j["cycles"].get<std::uint64_t>(), total);
  // The same sweep again into the same directory is refused; nothing is overwritten.
  const auto again = run_telar({"sim", "--cases", dir + "/cases.txt", "--out", dir + "/out"});
  EXPECT_EQ(again.status, 2);
  EXPECT_NE(again.err.find("already holds a sweep"), std::string::npos) << again.err;
  fs::remove_all(dir);
}

TEST(SimSweep, SweepsRunEveryCombinationOfTheValues) {
  const std::string dir = fresh_temp_dir("sim_sweep_values");
  const std::string base =
      "-DenseGEMM -M=32 -N=16 -K=128 -num_ms=64 -dn_bw=16 -rn_bw=16 "
      "-T_M=1 -T_N=1 -T_K=16";
  std::vector<std::string> args{"sim",      "--sweep", "T_K=4,8,16", "--sweep",
                                "-T_M=1,2", "--out",   dir + "/out", "--json"};
  for (const std::string& w : words(base)) args.push_back(w);
  const auto r = run_telar(args);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto rows = summary_rows(dir + "/out/summary.csv");
  ASSERT_EQ(rows.size(), 6u);
  std::size_t i = 0;
  for (const char* tk : {"4", "8", "16"})
    for (const char* tm : {"1", "2"}) {
      SCOPED_TRACE(rows[i].at("source"));
      EXPECT_EQ(rows[i].at("source"), std::string("T_K=") + tk + " T_M=" + tm);
      const std::string line =
          "-DenseGEMM -M=32 -N=16 -K=128 -num_ms=64 -dn_bw=16 -rn_bw=16 "
          "-T_N=1 -T_K=" +
          std::string(tk) + " -T_M=" + tm;
      EXPECT_EQ(rows[i].at("cycles"), std::to_string(alone(line)["cycles"].get<std::uint64_t>()));
      ++i;
    }
  // Different tiles, different figures: the sweep did vary the flag.
  EXPECT_NE(rows[0].at("cycles"), rows[4].at("cycles"));
  fs::remove_all(dir);
}

TEST(SimSweep, BadCasesAreRefusedBeforeAnyRunsNamingTheLine) {
  const std::string dir = fresh_temp_dir("sim_sweep_bad");
  std::ofstream(dir + "/cases.txt") << kLines[0] << "\n" << kLines[2] << " -num_mss=64\n";
  auto r = run_telar({"sim", "--cases", dir + "/cases.txt", "--out", dir + "/out"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cases.txt:2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("num_mss"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out"));
  // An illegal tile is refused up front too, with a legal one named.
  std::ofstream(dir + "/tile.txt") << kLines[0] << "\n"
                                   << "-FC -M=1 -N=32 -K=64 -num_ms=64 -dn_bw=16 -rn_bw=16 "
                                      "-T_K=16 -T_N=4\n";
  r = run_telar({"sim", "--cases", dir + "/tile.txt", "--out", dir + "/out"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("tile.txt:2: illegal tile"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out"));
  // A hardware no machine can hold is refused up front too.
  std::ofstream(dir + "/big.txt") << "-DenseGEMM -M=16 -N=16 -K=8 -mn_type=OS_MESH "
                                     "-rn_type=TEMPORALRN -mem_ctrl=TPU_OS_DENSE "
                                     "-ms_rows=65536 -ms_cols=65536 -dn_bw=16 -rn_bw=16\n";
  r = run_telar({"sim", "--cases", dir + "/big.txt", "--out", dir + "/out"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("big.txt:1"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out"));
  for (const auto& [args, needle] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"sim", "--cases", dir + "/missing.txt", "--out", dir + "/out"}, "missing.txt"},
           {{"sim", "--sweep", "T_K", "--out", dir + "/out", "-DenseGEMM"}, "--sweep T_K"},
           {{"sim", "--sweep", "T_K=1,2"}, "--out"},
           {{"sim", "--cases", dir + "/cases.txt", "-FC", "--out", dir + "/out"}, "--cases"}}) {
    r = run_telar(args);
    EXPECT_EQ(r.status, 2) << needle;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir + "/out"));
  fs::remove_all(dir);
}
