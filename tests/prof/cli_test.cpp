// telar prof end to end: the built binary, its exit statuses, outputs and one-line errors.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/files.hpp"

namespace fs = std::filesystem;

namespace {

struct Result {
  int status = -1;
  std::string out, err;
};

fs::path scratch(const std::string& name) {
  return fs::temp_directory_path() / ("telar_prof_cli_" + std::to_string(::getpid()) + "_" + name);
}

Result run_telar(const std::string& args) {
  const fs::path out = scratch("stdout"), err = scratch("stderr");
  const std::string command =
      std::string(TELAR_BINARY_DIR) + "/telar " + args + " >" + out.string() + " 2>" + err.string();
  const int raw = std::system(command.c_str());
  Result r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = telar::read_file(out);
  r.err = telar::read_file(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

std::size_t lines(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

}  // namespace

TEST(ProfCli, ListShowsKnownEventsAndWhetherTheyCountHere) {
  const Result r = run_telar("prof list");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("task-clock"), std::string::npos);
  EXPECT_NE(r.out.find("L1-dcache-load-misses"), std::string::npos);
  EXPECT_NE(r.out.find("PAPI_TOT_INS"), std::string::npos);
  // task-clock is always countable; its line says so.
  const auto line_start = r.out.find("\ntask-clock ");
  ASSERT_NE(line_start, std::string::npos) << r.out.substr(0, 400);
  const std::string line =
      r.out.substr(line_start + 1, r.out.find('\n', line_start + 1) - line_start - 1);
  EXPECT_NE(line.find("yes"), std::string::npos) << line;
}

TEST(ProfCli, RunWrapsACommandAndWritesItsRunDirectory) {
  const fs::path dir = scratch("run");
  fs::remove_all(dir);
  const Result r = run_telar("prof run -e task-clock --out " + dir.string() + " -- true");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("task-clock"), std::string::npos) << r.out;
  const std::string csv = telar::read_file(dir / "counters.csv");
  EXPECT_EQ(csv.rfind("scope,epoch,batch,node,cpu,event,value,time_enabled,time_running,wall_ns\n"
                      "run,,,,-1,task-clock,",
                      0),
            0u)
      << csv;
  EXPECT_TRUE(fs::exists(dir / "report.html"));
  EXPECT_TRUE(fs::exists(dir / "run.json"));
  fs::remove_all(dir);
}

TEST(ProfCli, RunPassesOnTheCommandsExitStatusAndWritesColonLines) {
  const fs::path dir = scratch("exit"), colon = scratch("colon.txt");
  fs::remove(colon);
  const Result r = run_telar("prof run -e task-clock,page-faults --out " + dir.string() +
                             " --colon " + colon.string() + " -- sh -c 'exit 5'");
  EXPECT_EQ(r.status, 5) << r.err;
  const std::string lines_text = telar::read_file(colon);
  EXPECT_EQ(lines(lines_text), 2u) << lines_text;
  EXPECT_EQ(lines_text.rfind("-1:", 0), 0u) << lines_text;
  EXPECT_NE(lines_text.find("::page-faults\n"), std::string::npos) << lines_text;
  fs::remove_all(dir);
  fs::remove(colon);
}

TEST(ProfCli, UnknownEventIsAOneLineErrorWithExitTwoAndNoFiles) {
  const fs::path dir = scratch("bad");
  fs::remove_all(dir);
  const Result r = run_telar("prof run -e task-clok --out " + dir.string() + " -- true");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("unknown event 'task-clok'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("task-clock"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir)) << "nothing written on bad input";
}

TEST(ProfCli, UnwritableOutputIsAOneLineErrorBeforeTheCommandRuns) {
  const fs::path marker = scratch("ran");
  fs::remove(marker);
  const Result r =
      run_telar("prof run -e task-clock --out /proc/telar-out -- touch " + marker.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("/proc/telar-out"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(marker)) << "the command must not run when the output is unwritable";
}

TEST(ProfCli, BadOptionsAreOneLineErrors) {
  for (const char* args :
       {"prof run -e task-clock --cpus 99999 -- true",
        "prof run -e task-clock --domain everything -- true", "prof run -e task-clock",
        "prof matmul --variants naive-O2", "prof frobnicate"}) {
    const Result r = run_telar(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1u) << args << "\n" << r.err;
  }
}

TEST(ProfCli, MatmulSmallSizes) {
  const fs::path dir = scratch("matmul");
  fs::remove_all(dir);
  const Result r =
      run_telar("prof matmul --sizes 16,32 --variants naive-O0,naive-O3 -e task-clock --out " +
                dir.string() + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("naive-O3"), std::string::npos) << r.out;
  const std::string last = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  const auto result = nlohmann::json::parse(last);
  ASSERT_EQ(result["points"].size(), 4u) << last;
  for (const auto& p : result["points"]) {
    EXPECT_GT(p["seconds"].get<double>(), 0.0) << p;
    // n³ multiply-adds: GFLOP/s is 2n³ / seconds.
    const double n = p["n"].get<double>();
    EXPECT_NEAR(p["gflops"].get<double>() * p["seconds"].get<double>() * 1e9, 2 * n * n * n,
                1e-6 * n * n * n)
        << p;
    // Without fp_arith events the count is null, never a made-up number.
    EXPECT_TRUE(p["fp_ops"].is_null() || p["fp_ops"].get<double>() >= 2 * n * n * n) << p;
  }
  EXPECT_EQ(result["out"], dir.string());
  const std::string csv = telar::read_file(dir / "matmul.csv");
  EXPECT_EQ(lines(csv), 1u + 4u) << csv;
  EXPECT_NE(telar::read_file(dir / "counters.csv").find("run/naive-O0[32],"), std::string::npos);
  fs::remove_all(dir);
}
