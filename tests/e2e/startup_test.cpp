// End-to-end: the optional modules (core/module.hpp). Commands that need none of them never map
// the CUDA, NCCL, MPI, OpenBLAS, libpfm4 or PAPI libraries (the dynamic loader's own account,
// LD_DEBUG=files, lists every library a process opens); a cuda run loads them, so the check can
// fail; `telar --version`
// lists the modules and `--check-modules` loads each; a missing or broken module is one line,
// exit 2, naming the library.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "backend/backend.hpp"
#include "core/module.hpp"
#include "run_command.hpp"

using telar::testing::fresh_temp_dir;
using telar::testing::run_shell;
using telar::testing::telar_binary;
namespace fs = std::filesystem;

namespace {

const std::string kConfigs = std::string(TELAR_SOURCE_DIR) + "/configs/";
const char* const kHeavy[] = {"libcudart", "libcublas",   "libcudnn", "libnccl",
                              "libmpi",    "libopenblas", "libpfm",   "libpapi"};

// The libraries the loader opened while running `telar ARGS` (its stderr with LD_DEBUG=files).
std::string opened_libraries(const std::string& args) {
  const auto r = run_shell("(LD_DEBUG=files " + telar_binary() + " " + args +
                           " 2>&1 >/dev/null | grep 'file=' || true)");
  return r.out;
}

int lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST(StartUp, CommandsThatNeedNoModuleMapNoneOfTheirLibraries) {
  const std::string dir = fresh_temp_dir("startup_sim");
  const std::string commands[] = {
      "--version",
      "models",
      "sim --out " + dir + " --json --config " + kConfigs +
          "maeri_256mses_64_bw.cfg -DenseGEMM -M=20 -N=20 -K=256 -T_K=64 -T_M=2 -T_N=1",
      "train --model mlp:784-16-10 --data synthetic:64:1x28x28:10 --epochs 1 --batch-size 16 "
      "--quiet --out " +
          dir + "/run",
  };
  for (const auto& args : commands) {
    const std::string opened = opened_libraries(args);
    ASSERT_NE(opened.find("libc.so"), std::string::npos) << "LD_DEBUG gave no account: " << opened;
    for (const char* heavy : kHeavy)
      EXPECT_EQ(opened.find(heavy), std::string::npos) << "telar " << args << " opened " << heavy;
    EXPECT_EQ(opened.find("libtelar_"), std::string::npos)
        << "telar " << args << " loaded a module";
  }
  EXPECT_TRUE(fs::exists(dir + "/run/run.json"));
}

TEST(StartUp, ACudaTargetLoadsTheCudaModuleAndItsLibraries) {
  if (!telar::backend::built_in("cuda")) GTEST_SKIP() << "the CUDA backend is not built here";
  const std::string dir = fresh_temp_dir("startup_cuda");
  const std::string opened = opened_libraries(
      "infer --model mnist_cnn --backend cuda:0 --repeats 1 --out " + dir + "/infer");
  EXPECT_NE(opened.find("libtelar_cuda.so"), std::string::npos) << opened;
  EXPECT_NE(opened.find("libcudart"), std::string::npos) << opened;
}

TEST(StartUp, VersionListsTheModulesAndCheckModulesLoadsThem) {
  auto r = run_shell(telar_binary() + " --version");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const auto& m : telar::modules::known()) {
    const auto at = r.out.find("  " + std::string(m.name) + " ");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    EXPECT_NE(line.find(m.built ? "present" : "not built"), std::string::npos) << line;
  }
  r = run_shell(telar_binary() + " --version --check-modules");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const auto& m : telar::modules::known()) {
    if (!m.built) continue;
    const auto at = r.out.find("  " + std::string(m.name) + " ");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    // Every module this build made resolves all its symbols and libraries on this machine.
    EXPECT_NE(line.find(": loads, "), std::string::npos) << line;
  }
  r = run_shell(telar_binary() + " --version --modules");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("--check-modules"), std::string::npos) << r.err;
}

TEST(StartUp, AMissingOrBrokenModuleIsOneLineNamingIt) {
  if (!telar::backend::built_in("cuda")) GTEST_SKIP() << "the CUDA backend is not built here";
  const std::string dir = fresh_temp_dir("startup_broken");
  const std::string infer = " " + telar_binary() +
                            " infer --model mnist_cnn --backend cuda:0 --repeats 1 --out " + dir +
                            "/infer";

  auto r = run_shell("TELAR_MODULE_DIR=" + dir + infer);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("libtelar_cuda.so"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not installed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("TELAR_MODULE_DIR"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/infer"));

  std::ofstream(dir + "/libtelar_cuda.so") << "not a shared library\n";
  r = run_shell("TELAR_MODULE_DIR=" + dir + infer);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("cannot be loaded"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(dir + "/libtelar_cuda.so"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--backend cpu"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/infer"));
}

TEST(StartUp, AnInstalledTelarLoadsTheModulesInstalledBesideIt) {
  const std::string prefix = fresh_temp_dir("startup_install");
  auto r = run_shell(std::string(TELAR_CMAKE_COMMAND) + " --install " + TELAR_BINARY_DIR +
                     " --prefix " + prefix);
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_shell(prefix + "/bin/telar --version --check-modules");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const auto& m : telar::modules::known()) {
    if (!m.built) continue;
    const std::string installed = prefix + "/lib/telar/" + telar::modules::library_name(m.name);
    EXPECT_TRUE(fs::exists(installed)) << installed;
    EXPECT_NE(r.out.find("loads, " + installed), std::string::npos) << r.out;
  }
  fs::remove_all(prefix);
}
