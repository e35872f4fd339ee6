// End-to-end tests of data-parallel training (telar train --workers): threads give the single
// worker's losses (a model without dropout, interleaved shards, unequal shares); a failing
// worker ends the job naming itself, the last checkpoint stays valid and --resume continues
// exactly; MPI ranks give the same losses as threads; a killed rank ends the job quickly;
// bad options are one-line errors.
#include <gtest/gtest.h>
#include <sched.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_command.hpp"

using telar::testing::fresh_temp_dir;
using telar::testing::run_shell;
using telar::testing::run_telar;
namespace fs = std::filesystem;

namespace {

nlohmann::json last_json(const telar::testing::CommandResult& r) {
  return nlohmann::json::parse(telar::testing::last_line(r.out));
}

// A no-dropout model on synthetic data: 512 samples, global batch 64 (8 steps per epoch).
std::vector<std::string> base(const std::string& out, int epochs) {
  return {"train", "--model", "mlp:784-32-10", "--data", "synthetic:512:1x28x28:10",
          "--epochs", std::to_string(epochs), "--batch-size", "64", "--lr", "0.05",
          "--momentum", "0.9", "--quiet", "--json", "--out", out};
}

std::vector<std::string> with(std::vector<std::string> args, std::initializer_list<std::string> more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

void expect_one_line_error(const telar::testing::CommandResult& r, const std::string& needle) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

bool have_mpi(std::string* why) {
  const auto v = run_telar({"--version"});
  if (v.out.find("mpi=yes") == std::string::npos) {
    *why = "this telar was built without MPI (libopenmpi-dev missing)";
    return false;
  }
  if (run_shell("command -v mpirun").status != 0) {
    *why = "mpirun is not installed (openmpi-bin)";
    return false;
  }
  return true;
}

// mpirun in a container, as root or not: shared memory between ranks on this machine, no
// cross-memory attach (needs ptrace rights), more ranks than cores allowed. Under
// AddressSanitizer the ranks do not check for leaks at exit: OpenMPI's plugins keep memory
// until the end and are unloaded before the check, so their leaks cannot even be attributed
// (telar's own code is leak-checked by the thread-worker tests).
std::string mpirun(int ranks) {
  return "ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:detect_leaks=0\" "
         "OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none "
         "OMPI_MCA_rmaps_base_oversubscribe=1 mpirun --allow-run-as-root --oversubscribe -np " +
         std::to_string(ranks) + " ";
}

std::string quoted(const std::vector<std::string>& args) {
  std::string s = telar::testing::telar_binary();
  for (const auto& a : args) s += " '" + a + "'";
  return s;
}

}  // namespace

TEST(DistE2E, ThreadWorkersGiveTheSingleWorkerLosses) {
  const std::string root = fresh_temp_dir("dist_equal");
  auto one = run_telar(with(base(root + "/one", 2), {"--backend", "cpu:threads=1"}));
  ASSERT_EQ(one.status, 0) << one.err;
  auto two = run_telar(with(base(root + "/two", 2),
                            {"--workers", "cpu:threads=1,cpu:threads=1", "--balance", "weights:3/1"}));
  ASSERT_EQ(two.status, 0) << two.err;
  const auto a = last_json(one), b = last_json(two);
  for (const char* phase : {"train", "test"}) {
    const double x = a[phase]["loss"], y = b[phase]["loss"];
    EXPECT_NEAR(x, y, 1e-5 * std::abs(x)) << phase;
    EXPECT_EQ(a[phase]["samples"], b[phase]["samples"]) << phase;
  }
  EXPECT_EQ(b["data_parallel"]["workers"], 2);
  EXPECT_EQ(b["data_parallel"]["shares"][0], 0.75);
  const auto run = nlohmann::json::parse(std::ifstream(root + "/two/run.json"));
  EXPECT_EQ(run["status"], "finished");
  EXPECT_EQ(run["config"]["data_parallel"]["balance"], "weights:3/1");
}

// Thread workers are pinned each to a core of its own when their threads fit (run.json says
// where), left to the scheduler with --no-pin; --no-pin means nothing without thread workers.
TEST(DistE2E, ThreadWorkersArePinnedToCoresOfTheirOwn) {
  const std::string root = fresh_temp_dir("dist_pin");
  auto pinned = run_telar(with(base(root + "/pinned", 1), {"--workers", "cpu:threads=1,cpu:threads=1"}));
  ASSERT_EQ(pinned.status, 0) << pinned.err;
  const auto cpus = nlohmann::json::parse(std::ifstream(root + "/pinned/run.json"))["config"]["data_parallel"]["cpus"];
  cpu_set_t allowed;  // the CPUs this test (and the telar it starts) may use
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  if (CPU_COUNT(&allowed) >= 2) {
    ASSERT_EQ(cpus.size(), 2u) << cpus.dump();
    ASSERT_EQ(cpus[0].size(), 1u);
    ASSERT_EQ(cpus[1].size(), 1u);
    EXPECT_NE(cpus[0][0], cpus[1][0]);
  } else {
    EXPECT_TRUE(cpus.empty()) << "two one-thread workers do not fit one CPU: " << cpus.dump();
  }
  auto free = run_telar(with(base(root + "/free", 1), {"--workers", "cpu:threads=1,cpu:threads=1", "--no-pin"}));
  ASSERT_EQ(free.status, 0) << free.err;
  EXPECT_TRUE(nlohmann::json::parse(std::ifstream(root + "/free/run.json"))["config"]["data_parallel"]["cpus"].empty());
  expect_one_line_error(run_telar(with(base(root + "/a", 1), {"--no-pin"})), "needs --workers");
  expect_one_line_error(run_telar(with(base(root + "/b", 1), {"--workers", "mpi", "--no-pin"})), "mpirun");
  for (const char* d : {"a", "b"}) EXPECT_FALSE(fs::exists(root + "/" + d)) << d;
}

TEST(DistE2E, AFailingWorkerEndsTheJobAndResumeContinuesExactly) {
  const std::string root = fresh_temp_dir("dist_fail");
  const std::string workers = "cpu:threads=1,cpu:threads=1";
  auto whole = run_telar(with(base(root + "/whole", 3), {"--workers", workers}));
  ASSERT_EQ(whole.status, 0) << whole.err;
  // Worker 1 dies at step 12, in the second epoch: the first epoch's checkpoint stays.
  const auto start = std::chrono::steady_clock::now();
  auto broken = run_telar(with(base(root + "/broken", 3),
                               {"--workers", "cpu:threads=1,cpu:threads=1:fail_at_step=12"}));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(broken.status, 2);
  EXPECT_NE(broken.err.find("worker 1 (cpu:threads=1:fail_at_step=12) failed: this worker fails "
                            "at step 12 on purpose"),
            std::string::npos)
      << broken.err;
  EXPECT_EQ(std::count(broken.err.begin(), broken.err.end(), '\n'), 1) << broken.err;
  EXPECT_LT(seconds, 30.0);
  const auto status = nlohmann::json::parse(std::ifstream(root + "/broken/run.json"))["status"];
  EXPECT_NE(status.get<std::string>().find("failed: worker 1"), std::string::npos) << status;
  ASSERT_TRUE(fs::exists(root + "/broken/checkpoint.telar"));
  auto resumed = run_telar({"train", "--resume", root + "/broken", "--model", "mlp:784-32-10",
                            "--data", "synthetic:512:1x28x28:10", "--epochs", "3",
                            "--batch-size", "64", "--lr", "0.05", "--momentum", "0.9",
                            "--workers", workers, "--quiet", "--json"});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  const auto a = last_json(whole), b = last_json(resumed);
  EXPECT_EQ(a["train"]["loss"], b["train"]["loss"]);
  EXPECT_EQ(a["test"]["loss"], b["test"]["loss"]);
}

TEST(DistE2E, DynamicBalanceAndContiguousShardsRun) {
  const std::string root = fresh_temp_dir("dist_dyn");
  auto r = run_telar(with(base(root + "/dyn", 2),
                          {"--workers", "cpu:threads=1,cpu:threads=1:slowdown=3", "--balance",
                           "dynamic", "--shard", "contiguous", "--warmup-steps", "2",
                           "--warmup-seconds", "0.2"}));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = last_json(r);
  const auto& dp = j["data_parallel"];
  EXPECT_EQ(dp["balance"], "dynamic");
  EXPECT_EQ(dp["shard"], "contiguous");
  ASSERT_EQ(dp["measured_samples_per_s"].size(), 2u);
  // The slowed worker measures slower and gets less work.
  EXPECT_GT(dp["shares"][0].get<double>(), dp["shares"][1].get<double>());
  EXPECT_EQ(j["train"]["samples"], 512);
}

TEST(DistE2E, BadOptionsAreOneLineErrors) {
  const std::string root = fresh_temp_dir("dist_bad");
  expect_one_line_error(run_telar(with(base(root + "/a", 1), {"--workers", "cpu,cpu", "--balance", "equl"})),
                        "did you mean 'equal'");
  expect_one_line_error(run_telar(with(base(root + "/b", 1), {"--workers", "cpu", "--backend", "cpu"})),
                        "drop --backend");
  expect_one_line_error(run_telar(with(base(root + "/c", 1), {"--balance", "auto"})), "needs --workers");
  expect_one_line_error(run_telar(with(base(root + "/d", 1), {"--workers", "cpu,cpu", "--balance", "weights:1/2/3"})),
                        "3 weights for 2 workers");
  expect_one_line_error(run_telar(with(base(root + "/e", 1), {"--workers", "cpu:slowdown=0"})),
                        "slowdown=0");
  expect_one_line_error(run_telar(with(base(root + "/f", 1), {"--workers", "cuda:99,cpu"})), "cuda");
  expect_one_line_error(run_telar(with(base(root + "/g", 1), {"--workers", "cpu,cpu", "--shard", "blocks"})),
                        "--shard blocks");
  for (const char* d : {"a", "b", "c", "d", "e", "f", "g"}) EXPECT_FALSE(fs::exists(root + "/" + d)) << d;
}

// --communicator nccl needs every worker on its own GPU (and NCCL built in): refused before
// anything is written. (With GPUs absent, cuda workers are refused in tests/e2e/cuda_test.cpp.)
TEST(DistE2E, NcclCommunicatorForCpuWorkersIsAOneLineError) {
  const std::string root = fresh_temp_dir("dist_nccl");
  expect_one_line_error(run_telar(with(base(root + "/a", 1), {"--workers", "cpu,cpu", "--communicator", "nccl"})),
                        "--communicator nccl");
  expect_one_line_error(run_telar(with(base(root + "/b", 1), {"--communicator", "nccl"})), "needs --workers");
  expect_one_line_error(run_telar(with(base(root + "/c", 1), {"--workers", "cpu,cpu", "--communicator", "gloo"})),
                        "expected auto, threads or nccl");
  for (const char* d : {"a", "b", "c"}) EXPECT_FALSE(fs::exists(root + "/" + d)) << d;
}

TEST(DistE2E, PresetIsTheThesisExperiment) {
  const std::string out = fresh_temp_dir("dist_preset") + "/run";
  // One step of two samples: the architecture, loss and optimiser are what matters here.
  auto r = run_telar({"train", "--preset", "seed002-resnet34", "--data", "synthetic:20:1x148x197:9",
                      "--validation", "2", "--batch-size", "2", "--limit-batches", "1", "--epochs",
                      "1", "--quiet", "--json", "--out", out});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto c = nlohmann::json::parse(std::ifstream(out + "/run.json"))["config"];
  EXPECT_EQ(c["model"], "resnet34");
  EXPECT_EQ(c["input"], "1x148x197");
  EXPECT_EQ(c["classes"], 9);
  EXPECT_EQ(c["loss"], "softmax_mse");
  EXPECT_EQ(c["parameters"], 21283017);
  EXPECT_EQ(c["lr"], 0.05);
  EXPECT_NE(c["optimizer"].get<std::string>().find("sgd"), std::string::npos);
  EXPECT_EQ(c["batch_size"], 2);  // explicit options win over the preset
}

TEST(DistE2E, MpiRanksGiveTheThreadLosses) {
  std::string why;
  if (!have_mpi(&why)) GTEST_SKIP() << "MPI test skipped: " << why;
  const std::string root = fresh_temp_dir("dist_mpi");
  auto threads = run_telar(with(base(root + "/threads", 2), {"--workers", "cpu:threads=1,cpu:threads=1"}));
  ASSERT_EQ(threads.status, 0) << threads.err;
  auto mpi = run_shell(mpirun(2) + quoted(with(base(root + "/mpi", 2), {"--workers", "mpi:cpu:threads=1"})));
  ASSERT_EQ(mpi.status, 0) << mpi.err;
  const auto a = last_json(threads), b = last_json(mpi);
  EXPECT_EQ(b["data_parallel"]["communicator"], "mpi");
  // Two summands: a + b is the same whoever adds them, so the runs agree bit for bit; allow
  // a rounding's worth in case an MPI library reduces in another grouping.
  for (const char* phase : {"train", "test"}) {
    const double x = a[phase]["loss"], y = b[phase]["loss"];
    EXPECT_NEAR(x, y, 1e-6 * std::abs(x)) << phase;
  }
}

TEST(DistE2E, AKilledRankEndsTheJobNamingIt) {
  std::string why;
  if (!have_mpi(&why)) GTEST_SKIP() << "MPI test skipped: " << why;
  const std::string root = fresh_temp_dir("dist_kill");
  // A long run; once it has written its first checkpoint, rank 1 is killed with SIGKILL.
  const std::string cmd =
      mpirun(2) +
      quoted({"train", "--model", "mlp:784-32-10", "--data", "synthetic:2048:1x28x28:10",
              "--epochs", "100000", "--batch-size", "64", "--workers", "mpi:cpu:threads=1",
              "--quiet", "--out", root + "/run"}) +
      " > " + root + "/log 2>&1 & MP=$!; "
      "for i in $(seq 600); do [ -f " + root + "/run/checkpoint.telar ] && break; sleep 0.1; done; "
      "for p in $(pgrep -P $MP); do "
      "  if tr '\\0' '\\n' < /proc/$p/environ | grep -q '^OMPI_COMM_WORLD_RANK=1$'; then kill -9 $p; fi; "
      "done; S=$(date +%s); wait $MP; RC=$?; E=$(date +%s); echo \"rc=$RC seconds=$((E - S))\"; "
      "cat " + root + "/log";
  auto r = run_shell("timeout 120 bash -c \"" + [&] {
    std::string esc;
    for (char c : cmd) {
      if (c == '"' || c == '$' || c == '\\' || c == '`') esc += '\\';
      esc += c;
    }
    return esc;
  }() + "\"");
  ASSERT_NE(r.out.find("rc="), std::string::npos) << r.out << r.err;
  EXPECT_EQ(r.out.find("rc=0 "), std::string::npos) << r.out;
  const auto at = r.out.find("seconds=");
  EXPECT_LT(std::stoi(r.out.substr(at + 8)), 30) << r.out;
  EXPECT_NE(r.out.find("rank 1"), std::string::npos) << r.out;
  // The checkpoint written before the kill is intact.
  auto e = run_telar({"eval", "--checkpoint", root + "/run", "--data", "synthetic:2048:1x28x28:10", "--json"});
  EXPECT_EQ(e.status, 0) << e.err;
}
