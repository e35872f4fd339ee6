// End-to-end: `telar train/infer --backend cuda:0` (and `train --workers cuda:0,...`) on a
// machine without a usable GPU exits 2 with one line that says what to do and writes no run
// directory; with a GPU, a short training run on cuda:0 succeeds and writes its run directory.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "backend/backend.hpp"
#include "core/error.hpp"
#include "run_command.hpp"

using telar::testing::fresh_temp_dir;
using telar::testing::run_telar;
namespace fs = std::filesystem;

namespace {

bool gpu_usable() {
  try {
    telar::backend::check_usable(telar::backend::parse_backend_spec("cuda:0"));
    return true;
  } catch (const telar::Error&) {
    return false;
  }
}

std::vector<std::string> train_args(const std::string& out, const std::string& backend) {
  return {"train",    "--model", "mnist_cnn",    "--data", "synthetic:64:1x28x28:10",
          "--epochs", "1",       "--batch-size", "16",     "--backend",
          backend,    "--quiet", "--out",        out};
}

}  // namespace

TEST(CudaE2E, TrainWithoutAGpuIsAOneLineErrorAndWritesNothing) {
  if (gpu_usable()) GTEST_SKIP() << "a CUDA device is usable here (see TrainOnTheGpuWritesARun)";
  const std::string root = fresh_temp_dir("cuda_e2e");
  const auto r = run_telar(train_args(root + "/run", "cuda:0"));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  if (telar::backend::built_in("cuda"))
    EXPECT_NE(r.err.find("no CUDA device is usable here"), std::string::npos) << r.err;
  else
    EXPECT_NE(r.err.find("not built into this telar"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--backend cpu"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(root + "/run"));

  const auto w = run_telar({"train", "--model", "mlp:784-16-10", "--data",
                            "synthetic:64:1x28x28:10", "--epochs", "1", "--batch-size", "16",
                            "--workers", "cuda:0,cpu:threads=1", "--quiet", "--out", root + "/dp"});
  EXPECT_EQ(w.status, 2) << w.err;
  EXPECT_NE(w.err.find("cuda:0"), std::string::npos) << w.err;
  EXPECT_NE(w.err.find("use cpu workers"), std::string::npos) << w.err;
  EXPECT_EQ(std::count(w.err.begin(), w.err.end(), '\n'), 1) << w.err;
  EXPECT_FALSE(fs::exists(root + "/dp"));

  // NCCL between two GPUs: refused the same way (no device, or no NCCL in this build).
  const auto n = run_telar({"train", "--model", "mlp:784-16-10", "--data",
                            "synthetic:64:1x28x28:10", "--epochs", "1", "--batch-size", "16",
                            "--workers", "cuda:0,cuda:1", "--communicator", "nccl", "--quiet",
                            "--out", root + "/nccl"});
  EXPECT_EQ(n.status, 2) << n.err;
  EXPECT_EQ(std::count(n.err.begin(), n.err.end(), '\n'), 1) << n.err;
  EXPECT_FALSE(fs::exists(root + "/nccl"));

  const auto i = run_telar({"infer", "--model", "mnist_cnn", "--backend", "cuda:0", "--repeats",
                            "1", "--out", root + "/infer"});
  EXPECT_EQ(i.status, 2) << i.err;
  EXPECT_EQ(std::count(i.err.begin(), i.err.end(), '\n'), 1) << i.err;
  EXPECT_FALSE(fs::exists(root + "/infer"));
}

TEST(CudaE2E, TrainOnTheGpuWritesARun) {
  if (!gpu_usable()) GTEST_SKIP() << "no CUDA device: cuda:0 is not usable on this machine";
  const std::string root = fresh_temp_dir("cuda_e2e_gpu");
  const auto r = run_telar(train_args(root + "/run", "cuda:0"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(root + "/run/run.json"));
  const auto w = run_telar({"train", "--model", "mlp:784-16-10", "--data",
                            "synthetic:64:1x28x28:10", "--epochs", "1", "--batch-size", "16",
                            "--workers", "cuda:0,cpu:threads=1", "--quiet", "--out", root + "/dp"});
  EXPECT_EQ(w.status, 0) << w.err;
}
