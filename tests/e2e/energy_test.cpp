// End-to-end tests of energy accounting: telar energy wraps a command (exit status, samples,
// summary), telar train reports energy and EDP, telar compare puts runs side by side. The
// machine's meters are replaced by a fixture powercap tree (TELAR_POWERCAP_ROOT) that the
// wrapped command itself advances; with no meter, nothing fails and it is said once.
#include <gtest/gtest.h>

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

// package-0 at 1 J, dram-0 at 0.5 J.
std::string fixture(const std::string& root) {
  const fs::path pc = fs::path(root) / "powercap";
  fs::create_directories(pc / "intel-rapl:0" / "intel-rapl:0:0");
  auto put = [](const fs::path& p, const std::string& v) { std::ofstream(p) << v << "\n"; };
  put(pc / "intel-rapl:0" / "name", "package-0");
  put(pc / "intel-rapl:0" / "energy_uj", "1000000");
  put(pc / "intel-rapl:0" / "max_energy_range_uj", "262143328850");
  put(pc / "intel-rapl:0" / "intel-rapl:0:0" / "name", "dram");
  put(pc / "intel-rapl:0" / "intel-rapl:0:0" / "energy_uj", "500000");
  put(pc / "intel-rapl:0" / "intel-rapl:0:0" / "max_energy_range_uj", "65712999613");
  return pc.string();
}

}  // namespace

TEST(EnergyE2E, WrapsACommandAndSumsTheCountersItAdvanced) {
  const std::string root = fresh_temp_dir("energy_cmd");
  const std::string pc = fixture(root);
  // The command spends 4 J of package and 1 J of DRAM (it writes the counters, atomically).
  const std::string script =
      "sleep 0.2; echo 5000000 > " + pc + "/p.tmp; mv " + pc + "/p.tmp " + pc +
      "/intel-rapl:0/energy_uj; echo 1500000 > " + pc + "/d.tmp; mv " + pc + "/d.tmp " + pc +
      "/intel-rapl:0/intel-rapl:0:0/energy_uj; sleep 0.2; echo out-of-the-command; exit 3";
  // --gpus 0: GPU 0 is the one the command uses (index 0 is a valid index; no GPU here is fine).
  // --meters rapl: only the fixture's counters, also on a machine with a GPU.
  auto r = run_telar({"energy", "--powercap-root", pc, "--interval", "50", "--gpus", "0",
                      "--meters", "rapl", "--out", root + "/run", "--json", "--", "sh", "-c",
                      script});
  EXPECT_EQ(r.status, 3) << r.err;  // the command's status
  EXPECT_EQ(r.out.find("out-of-the-command"), 0u) << r.out;
  const auto j = last_json(r);
  EXPECT_EQ(j["exit_status"], 3);
  const auto& e = j["energy"];
  ASSERT_TRUE(e["measured"].get<bool>()) << e;
  EXPECT_DOUBLE_EQ(e["used_joules"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(e["dram_joules"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(e["devices"][0]["joules"].get<double>(), 4.0);
  EXPECT_NEAR(e["edp_joule_seconds"].get<double>(), 4.0 * e["seconds"].get<double>(), 1e-9);
  EXPECT_NE(r.err.find("package-0"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(root + "/run/energy.csv"));
  const auto run = nlohmann::json::parse(std::ifstream(root + "/run/run.json"));
  EXPECT_EQ(run["command"], "energy");
  EXPECT_EQ(run["status"], "finished");
}

TEST(EnergyE2E, NoMeterIsSaidOnceAndNothingFails) {
  const std::string root = fresh_temp_dir("energy_none");
  auto r = run_telar({"energy", "--powercap-root", root + "/none", "--meters", "rapl", "--out",
                      root + "/run", "--", "true"});
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string note = "no meter on this machine";
  const auto first = r.err.find(note);
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(note, first + 1), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(root + "/run/energy.csv"));
}

TEST(EnergyE2E, CommandsHaveHelp) {
  for (const char* cmd : {"energy", "compare"}) {
    auto r = run_telar({cmd, "--help"});
    EXPECT_EQ(r.status, 0) << cmd << r.err;
    EXPECT_NE(r.out.find("--json"), std::string::npos) << r.out;
  }
  EXPECT_NE(run_telar({"--help"}).out.find("compare"), std::string::npos);
}

TEST(EnergyE2E, BadInvocationsAreOneLineErrors) {
  const std::string root = fresh_temp_dir("energy_bad");
  auto a = run_telar({"energy", "--out", root + "/a"});
  EXPECT_EQ(a.status, 2);
  EXPECT_NE(a.err.find("give the command to measure after --"), std::string::npos) << a.err;
  auto b = run_telar({"energy", "--out", root + "/b", "--", "no-such-command-xyz"});
  EXPECT_EQ(b.status, 2);
  EXPECT_NE(b.err.find("cannot run 'no-such-command-xyz'"), std::string::npos) << b.err;
  auto m = run_telar({"energy", "--meters", "rapl,joulemeter", "--out", root + "/m", "--", "true"});
  EXPECT_EQ(m.status, 2);
  EXPECT_NE(m.err.find("--meters rapl,joulemeter: unknown meter 'joulemeter'"), std::string::npos)
      << m.err;
  EXPECT_EQ(std::count(m.err.begin(), m.err.end(), '\n'), 1) << m.err;
  auto t = run_telar({"train", "--model", "mlp:784-8-10", "--data", "synthetic:64:1x28x28:10",
                      "--meters", "", "--out", root + "/t"});
  EXPECT_EQ(t.status, 2);
  EXPECT_NE(t.err.find("--meters is empty"), std::string::npos) << t.err;
  EXPECT_FALSE(fs::exists(root + "/a"));
  EXPECT_FALSE(fs::exists(root + "/b"));
  EXPECT_FALSE(fs::exists(root + "/m"));
  EXPECT_FALSE(fs::exists(root + "/t"));
  auto c = run_telar({"compare", root + "/missing"});
  EXPECT_EQ(c.status, 2);
  EXPECT_EQ(std::count(c.err.begin(), c.err.end(), '\n'), 1) << c.err;
}

TEST(EnergyE2E, TrainingRunsReportEnergyAndCompare) {
  const std::string root = fresh_temp_dir("energy_train");
  const std::string pc = fixture(root);
  auto train = [&](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> args = {"train", "--model", "mlp:784-32-10", "--data",
                                     "synthetic:512:1x28x28:10", "--epochs", "1", "--batch-size",
                                     "64", "--quiet", "--json", "--powercap-root", pc,
                                     "--energy-interval", "20", "--out", root + "/" + name};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_telar(args);
  };
  auto one = train("one", {"--backend", "cpu:threads=1"});
  ASSERT_EQ(one.status, 0) << one.err;
  auto two = train("two", {"--workers", "cpu:threads=1,cpu:threads=1"});
  ASSERT_EQ(two.status, 0) << two.err;
  const auto e = last_json(two)["energy"];
  ASSERT_TRUE(e["measured"].get<bool>()) << e;
  EXPECT_EQ(e["devices"][0]["name"], "package-0");  // static fixture counters: 0 J
  auto cmp = run_telar({"compare", root + "/one", root + "/two", "--json"});
  ASSERT_EQ(cmp.status, 0) << cmp.err;
  const auto c = last_json(cmp);
  EXPECT_EQ(c["baseline"], "one");
  ASSERT_EQ(c["runs"].size(), 2u);
  EXPECT_EQ(c["runs"][1]["devices"], 2);
  const double t1 = c["runs"][0]["seconds"], t2 = c["runs"][1]["seconds"];
  EXPECT_DOUBLE_EQ(c["runs"][1]["speedup"].get<double>(), t1 / t2);
  EXPECT_DOUBLE_EQ(c["runs"][1]["efficiency"].get<double>(), t1 / t2 / 2);
  EXPECT_NE(cmp.out.find("speed-up"), std::string::npos);
}
