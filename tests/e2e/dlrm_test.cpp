// End-to-end tests of `telar dlrm`: the thesis' test command and its summary lines, the run
// directory, training on synthetic clicks and on Criteo-format files, benchmarks, the memory of
// the thesis' largest tables (procedural storage), and bad input (one line, exit 2, nothing
// written).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_command.hpp"

using telar::testing::count_files;
using telar::testing::fresh_temp_dir;
using telar::testing::last_line;
using telar::testing::run_telar;
namespace fs = std::filesystem;

namespace {

void expect_bad_input(const telar::testing::CommandResult& r, const std::string& needle) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr: " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr: " << r.err;
}

std::string criteo_line(int i) {
  std::string s = std::to_string(i % 3 == 0 ? 1 : 0);
  for (int j = 0; j < 13; ++j) s += "\t" + std::to_string((i * 7 + j) % 50);
  for (int t = 0; t < 26; ++t) s += "\t" + fmt::format("{:08x}", (i * 31 + t * 977) % 4096);
  return s;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

}  // namespace

TEST(DlrmCli, HelpListsTheReferenceFlags) {
  auto r = run_telar({"dlrm", "--help"});
  EXPECT_EQ(r.status, 0);
  for (const char* flag : {"--arch-sparse-feature-size",
                           "--arch-embedding-size",
                           "--arch-mlp-bot",
                           "--arch-mlp-top",
                           "--arch-interaction-op",
                           "--arch-interaction-itself",
                           "--data-generation",
                           "--data-size",
                           "--num-batches",
                           "--mini-batch-size",
                           "--num-indices-per-lookup",
                           "--num-indices-per-lookup-fixed",
                           "--loss-function",
                           "--learning-rate",
                           "--nepochs",
                           "--inference-only",
                           "--print-freq",
                           "--test-freq",
                           "--numpy-rand-seed",
                           "--raw-data-file",
                           "--processed-data-file",
                           "--embedding-storage",
                           "--benchmark"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
}

TEST(DlrmCli, ThesisTestCommandPrintsTheModelSummaryAndWritesARunDirectory) {
  const std::string out = fresh_temp_dir("dlrm_thesis") + "/run";
  auto r = run_telar({"dlrm", "--arch-embedding-size=1000-1000-1000-1000",
                      "--arch-sparse-feature-size=32", "--arch-mlp-bot=64-32",
                      "--arch-mlp-top=64-1", "--mini-batch-size=128", "--num-indices-per-lookup=50",
                      "--data-size=5", "--out", out, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(
      r.out.find(
          "Bottom MLP - [64 32]\nEmbedding Bags - [1000 1000 1000 1000]\nTop MLP - [42 64 1]\n"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Finished training it 1/1 of epoch 0, "), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(last_line(r.out));
  EXPECT_EQ(j["top_layers"], nlohmann::json({42, 64, 1}));
  EXPECT_EQ(j["train"]["samples"], 5);
  EXPECT_EQ(j["embedding_storage"], "memory");
  for (const char* f : {"run.json", "metrics.csv", "report.html"})
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
  const auto run = nlohmann::json::parse(std::ifstream(fs::path(out) / "run.json"));
  EXPECT_EQ(run["status"], "finished");
  EXPECT_EQ(run["command"], "dlrm");
  EXPECT_EQ(run["config"]["arch_mlp_bot"], nlohmann::json({64, 32}));
  fs::remove_all(fs::path(out).parent_path());
}

TEST(DlrmCli, TrainsOnSyntheticClicksAndInfers) {
  const std::string dir = fresh_temp_dir("dlrm_synth");
  auto r = run_telar({"dlrm", "--data-generation=synthetic", "--arch-embedding-size=300-300",
                      "--arch-sparse-feature-size=8", "--arch-mlp-bot=6-8", "--arch-mlp-top=8-1",
                      "--data-size=4000", "--mini-batch-size=50", "--num-indices-per-lookup=3",
                      "--loss-function=bce", "--learning-rate=0.1", "--nepochs=2",
                      "--print-freq=40", "--test-freq=40", "--out", dir + "/train", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Testing at - 40/80 of epoch 0, loss "), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(last_line(r.out));
  EXPECT_GT(j["test"]["auc"].get<double>(), 0.7);
  EXPECT_EQ(j["test"]["samples"], 1000);  // a quarter of --data-size
  const std::string metrics = slurp(dir + "/train/metrics.csv");
  EXPECT_NE(metrics.find(",test,auc,"), std::string::npos);
  EXPECT_NE(metrics.find(",component,EmbeddingBags seconds,"), std::string::npos);
  // Inference only: forward passes, no test pass.
  r = run_telar({"dlrm", "--data-generation=synthetic", "--arch-embedding-size=300-300",
                 "--arch-sparse-feature-size=8", "--arch-mlp-bot=6-8", "--arch-mlp-top=8-1",
                 "--data-size=200", "--mini-batch-size=50", "--inference-only", "--out",
                 dir + "/infer", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Finished inference it 4/4 of epoch 0"), std::string::npos) << r.out;
  EXPECT_EQ(nlohmann::json::parse(last_line(r.out))["mode"], "inference");
  fs::remove_all(dir);
}

TEST(DlrmCli, TrainsOnCriteoTextAndReusesItsCache) {
  const std::string dir = fresh_temp_dir("dlrm_criteo");
  std::string text;
  for (int i = 0; i < 300; ++i) text += criteo_line(i) + "\n";
  text += "1\t2\t3\n";  // malformed: skipped and counted
  write(dir + "/train.txt", text);
  const std::vector<std::string> common = {"dlrm",
                                           "--data-generation=dataset",
                                           "--arch-embedding-size=100",
                                           "--arch-sparse-feature-size=4",
                                           "--arch-mlp-bot=13-4",
                                           "--arch-mlp-top=4-1",
                                           "--mini-batch-size=32",
                                           "--loss-function=bce",
                                           "--json"};
  auto args = common;
  args.insert(args.end(), {"--raw-data-file", dir + "/train.txt", "--out", dir + "/r1"});
  auto r = run_telar(args);
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(last_line(r.out));
  EXPECT_EQ(j["skipped_lines"], 1);
  EXPECT_EQ(j["train"]["samples"], 270);  // 300 records, the last 10 % tested
  EXPECT_EQ(j["test"]["samples"], 30);
  EXPECT_NE(r.out.find("Embedding Bags - [100 100 100"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir + "/train.txt.telar-cache"));
  // The cache alone is enough, and --num-batches limits the training batches.
  args = common;
  args.insert(args.end(), {"--processed-data-file", dir + "/train.txt.telar-cache",
                           "--num-batches=2", "--out", dir + "/r2"});
  r = run_telar(args);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(last_line(r.out))["train"]["samples"], 64);
  // --strict turns the malformed line into an error, and nothing is written.
  args = common;
  args.insert(args.end(), {"--raw-data-file", dir + "/train.txt", "--processed-data-file",
                           dir + "/strict.cache", "--strict", "--out", dir + "/r3"});
  expect_bad_input(run_telar(args), "train.txt:301: expected 40 tab-separated fields");
  EXPECT_FALSE(fs::exists(dir + "/strict.cache"));
  EXPECT_FALSE(fs::exists(dir + "/r3"));
  fs::remove_all(dir);
}

TEST(DlrmCli, BadInputIsOneLineExitTwoAndWritesNothing) {
  const std::string dir = fresh_temp_dir("dlrm_bad");
  const std::string out = dir + "/out";
  auto bad = [&](std::vector<std::string> args, const std::string& needle) {
    args.insert(args.begin(), "dlrm");
    args.insert(args.end(), {"--out", out});
    SCOPED_TRACE(needle);
    expect_bad_input(run_telar(args), needle);
    EXPECT_EQ(count_files(out), 0);
  };
  bad({"--arch-sparse-feature-size=16", "--arch-mlp-bot=13-32"},
      "--arch-sparse-feature-size 16 does not match the last width of --arch-mlp-bot 32");
  bad({"--arch-embedding-size=10--10"}, "--arch-embedding-size: malformed list");
  bad({"--arch-mlp-bot=4-3-"}, "--arch-mlp-bot: malformed list");
  bad({"--arch-embedding-size=10-0"}, "sizes must be positive");
  bad({"--arch-sparse-feature-size=-2", "--arch-mlp-bot=4-2"}, "--arch-sparse-feature-size");
  bad({"--mini-batch-size=0"}, "--mini-batch-size must be positive");
  bad({"--data-size=-3"}, "--data-size must be positive");
  bad({"--num-indices-per-lookup=0"}, "--num-indices-per-lookup must be positive");
  bad({"--loss-function=hinge"}, "--loss-function: 'hinge' is not supported");
  bad({"--data-generation=trace"}, "--data-generation: 'trace' is not supported");
  bad({"--backend", "cuda:0"}, "DLRM runs on cpu or on a simulated accelerator");
  bad({"--embedding-storage=disk"}, "--embedding-storage: 'disk'");
  bad({"--data-generation=dataset"}, "needs --raw-data-file");
  // Criteo: a file that ends mid-record, and a cache with an index out of range.
  std::string text;
  for (int i = 0; i < 20; ++i) text += criteo_line(i) + "\n";
  write(dir + "/cut.txt", text + criteo_line(20).substr(0, 30));
  const std::vector<std::string> criteo = {
      "--data-generation=dataset", "--arch-embedding-size=100", "--arch-sparse-feature-size=4",
      "--arch-mlp-bot=13-4",       "--arch-mlp-top=4-1",        "--mini-batch-size=8"};
  auto args = criteo;
  args.insert(args.end(), {"--raw-data-file", dir + "/cut.txt"});
  bad(args, "ends in the middle of a record (line 21");
  EXPECT_FALSE(fs::exists(dir + "/cut.txt.telar-cache"));
  write(dir + "/ok.txt", text);
  args = criteo;
  args.insert(args.begin(), "dlrm");
  args.insert(args.end(),
              {"--raw-data-file", dir + "/ok.txt", "--inference-only", "--out", dir + "/ok"});
  const auto ok = run_telar(args);
  ASSERT_EQ(ok.status, 0) << ok.err;
  const fs::path cache = dir + "/ok.txt.telar-cache";
  const auto header = fs::file_size(cache) - 20 * 160;
  auto processed = criteo;
  processed.insert(processed.end(), {"--processed-data-file", cache.string()});
  {
    // Issue 23, item 4: record 3's third dense feature := NaN was trained on silently.
    std::fstream f(cache, std::ios::in | std::ios::out | std::ios::binary);
    const auto at = static_cast<std::streamoff>(header + 3 * 160 + 4 + 2 * 4);
    float kept = 0.0f;
    f.seekg(at);
    f.read(reinterpret_cast<char*>(&kept), 4);
    const float nan = std::nanf("");
    f.seekp(at);
    f.write(reinterpret_cast<const char*>(&nan), 4);
    f.close();
    bad(processed, "record 3 has a dense feature 3 of nan");
    std::fstream g(cache, std::ios::in | std::ios::out | std::ios::binary);
    g.seekp(at);
    g.write(reinterpret_cast<const char*>(&kept), 4);
  }
  {
    // Record 5, table 0's index := 100 (the tables have 100 rows).
    std::fstream f(cache, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(header + 5 * 160 + 4 + 13 * 4));
    const std::int32_t row = 100;
    f.write(reinterpret_cast<const char*>(&row), 4);
  }
  bad(processed, "record 5, table 0: index 100 is out of range for a table of 100 rows");
  fs::remove_all(dir);
}

TEST(DlrmCli, BenchmarksRunAndReport) {
  const std::string dir = fresh_temp_dir("dlrm_bench");
  auto r = run_telar({"dlrm", "--benchmark=embedding-bag", "--arch-embedding-size=5000",
                      "--arch-sparse-feature-size=32", "--arch-mlp-bot=8-32", "--arch-mlp-top=4-1",
                      "--mini-batch-size=64", "--num-indices-per-lookup=20",
                      "--num-indices-per-lookup-fixed", "--repeats=3", "--out", dir, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(last_line(r.out));
  EXPECT_GT(j["effective_gb_per_s"].get<double>(), 0.0);
  EXPECT_NEAR(j["lookups_per_call"].get<double>(), 64 * 20, 5);  // duplicates are rare
  // The same --out again is refused (a finished run is never overwritten by accident) ...
  const std::vector<std::string> inference = {
      "dlrm", "--benchmark=inference", "--arch-embedding-size=5000-5000",
      "--arch-sparse-feature-size=32", "--arch-mlp-bot=8-32", "--arch-mlp-top=4-1",
      "--mini-batch-size=64", "--repeats=3", "--out", dir, "--json"};
  r = run_telar(inference);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--overwrite"), std::string::npos) << r.err;
  // ... unless asked for.
  std::vector<std::string> replacing = inference;
  replacing.push_back("--overwrite");
  r = run_telar(replacing);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_GT(nlohmann::json::parse(last_line(r.out))["samples_per_s"].get<double>(), 0.0);
  fs::remove_all(dir);
}

TEST(DlrmCli, TheThesisLargestTablesRunInUnderAGigabyte) {
  // 50 tables x 10M rows x 32 = 64 GB of fp32: too big for memory, so procedural, and the
  // process stays under 1 GB resident (measured by the kernel: ru_maxrss).
  std::string sizes = "10000000";
  for (int t = 1; t < 50; ++t) sizes += "-10000000";
  const std::string dir = fresh_temp_dir("dlrm_rss");
  auto r = run_telar({"dlrm", "--arch-embedding-size=" + sizes, "--arch-sparse-feature-size=32",
                      "--arch-mlp-bot=128-64-64-32", "--arch-mlp-top=128-64-1",
                      "--num-indices-per-lookup=100", "--data-size=80", "--mini-batch-size=128",
                      "--nepochs=2", "--out", dir, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Top MLP - [1307 128 64 1]"), std::string::npos);
  const auto j = nlohmann::json::parse(last_line(r.out));
  EXPECT_EQ(j["embedding_storage"], "procedural");
  EXPECT_EQ(j["table_bytes"].get<std::int64_t>(), 50LL * 10000000 * 32 * 4);
  EXPECT_LT(j["max_rss_mb"].get<double>(), 1024.0);
  fs::remove_all(dir);
}

// Issue 23, item 3: Ctrl-C stops a DLRM training after the batch in progress with a checkpoint
// there (the MLPs, the tables' trained rows, the run's position), run.json "interrupted", exit
// 130; `--resume` ends with the losses of an uninterrupted run, bit for bit, for tables in
// memory and procedural ones (whose trained rows are an overlay).
class DlrmStop : public ::testing::TestWithParam<std::string> {};

TEST_P(DlrmStop, SigintCheckpointsAndTheResumedRunMatchesAnUninterruptedOne) {
  const std::string root = fresh_temp_dir("dlrm_stop");
  auto args = [&](const std::string& out) {
    return std::vector<std::string>{"dlrm",
                                    "--data-generation",
                                    "synthetic",
                                    "--data-size",
                                    "60000",
                                    "--mini-batch-size",
                                    "32",
                                    "--arch-embedding-size",
                                    "100000-200000-50000",
                                    "--arch-sparse-feature-size",
                                    "64",
                                    "--arch-mlp-bot",
                                    "13-256-64",
                                    "--arch-mlp-top",
                                    "256-64-1",
                                    "--test-freq",
                                    "1000",
                                    "--nepochs",
                                    "2",
                                    "--threads",
                                    "1",
                                    "--embedding-storage",
                                    GetParam(),
                                    "--quiet",
                                    "--json",
                                    "--out",
                                    out};
  };
  const std::string out = root + "/interrupted";
  const int status = telar::testing::run_telar_and_signal(
      args(out), [&] { return telar::testing::run_json_says_running(out); }, SIGINT, 200, 60.0);
  ASSERT_NE(status, -2) << "the training never started";
  ASSERT_NE(status, -1) << "killed instead of stopping cleanly";
  if (status == 0) GTEST_SKIP() << "the run finished before the signal arrived";
  ASSERT_EQ(status, 130);
  const auto stopped = nlohmann::json::parse(slurp(fs::path(out) / "run.json"));
  EXPECT_EQ(stopped["status"], "interrupted");
  EXPECT_EQ(stopped["interrupted"]["signal"], "SIGINT");
  EXPECT_GT(stopped["interrupted"]["batches_done"].get<std::int64_t>(), 0);
  ASSERT_TRUE(fs::exists(fs::path(out) / "checkpoint.telar"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "metrics.csv"));

  // A checkpoint is only resumed by the model that wrote it; the refusal leaves the run as it
  // was, still resumable.
  expect_bad_input(run_telar({"dlrm", "--resume", out, "--arch-mlp-top", "256-32-1"}),
                   "checkpoint");
  EXPECT_EQ(nlohmann::json::parse(slurp(fs::path(out) / "run.json"))["status"], "interrupted");

  const auto resumed = run_telar({"dlrm", "--resume", out, "--quiet", "--json"});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  const auto straight = run_telar(args(root + "/straight"));
  ASSERT_EQ(straight.status, 0) << straight.err;
  const auto a = nlohmann::json::parse(last_line(resumed.out));
  const auto b = nlohmann::json::parse(last_line(straight.out));
  EXPECT_EQ(a["train"], b["train"]);
  EXPECT_EQ(a["test"], b["test"]);
  EXPECT_EQ(nlohmann::json::parse(slurp(fs::path(out) / "run.json"))["status"], "finished");
  // The finished run keeps no checkpoint of a moment inside it, and cannot be resumed.
  EXPECT_FALSE(fs::exists(fs::path(out) / "checkpoint.telar"));
  expect_bad_input(run_telar({"dlrm", "--resume", out}), "no checkpoint there");
  fs::remove_all(root);
}

INSTANTIATE_TEST_SUITE_P(Storage, DlrmStop, ::testing::Values("memory", "procedural"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// Issue 23, item 5: a DLRM run stopped by a memory limit (here the address-space limit of
// `ulimit -v`, 1.7 GB, below what its 8192-wide MLPs at batch 8192 need) says so in one line,
// exit 2, and leaves no run directory behind (it used to stay, "running" or empty).
TEST(DlrmCli, AMemoryLimitStopsItCleanlyAndLeavesNoRunDirectory) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space; ulimit -v cannot apply";
#endif
  const std::string root = fresh_temp_dir("dlrm_oom");
  const auto r = telar::testing::run_shell(
      "ulimit -v 1700000; exec " + telar::testing::telar_binary() +
      " dlrm --data-generation synthetic --data-size 20000 --mini-batch-size 8192"
      " --arch-embedding-size 200000-200000 --arch-sparse-feature-size 64"
      " --arch-mlp-bot 13-8192-64 --arch-mlp-top 8192-8192-1 --embedding-storage memory"
      " --quiet --out " +
      root + "/run");
  expect_bad_input(r, "out of memory");
  EXPECT_FALSE(fs::exists(root + "/run"));
  fs::remove_all(root);
}
