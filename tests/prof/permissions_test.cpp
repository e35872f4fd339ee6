// perf_event_paranoid checks, with the sysctl file and the privilege injected.
#include "prof/permissions.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/error.hpp"
#include "core/files.hpp"
#include "prof/cpu_list.hpp"
#include "prof/session.hpp"

using namespace telar::prof;

namespace {

struct ParanoidFile {
  std::filesystem::path path;
  explicit ParanoidFile(int value)
      : path(std::filesystem::temp_directory_path() /
             ("telar_paranoid_" + std::to_string(::getpid()) + "_" + std::to_string(value))) {
    telar::write_file_atomic(path, std::to_string(value) + "\n");
  }
  ~ParanoidFile() { std::filesystem::remove(path); }
  PermissionProbe unprivileged() const { return {path, false}; }
};

std::string error_of(CountingMode mode, Domain domain, const PermissionProbe& probe) {
  try {
    check_permission(mode, domain, probe);
  } catch (const telar::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ProfPermissions, NeededValuesFollowTheKernelDocumentation) {
  EXPECT_EQ(paranoid_needed(CountingMode::PerThread, Domain::User), 2);
  EXPECT_EQ(paranoid_needed(CountingMode::PerThread, Domain::All), 1);
  EXPECT_EQ(paranoid_needed(CountingMode::PerThread, Domain::Kernel), 1);
  EXPECT_EQ(paranoid_needed(CountingMode::PerCpu, Domain::User), 0);
}

TEST(ProfPermissions, TooHighASettingSaysWhichValueIsNeeded) {
  ParanoidFile three(3);
  const std::string e = error_of(CountingMode::PerThread, Domain::User, three.unprivileged());
  EXPECT_NE(e.find("kernel.perf_event_paranoid is 3"), std::string::npos) << e;
  EXPECT_NE(e.find("needs 2 or lower"), std::string::npos) << e;
  EXPECT_NE(e.find("sysctl -w kernel.perf_event_paranoid=2"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos);

  ParanoidFile two(2);
  EXPECT_EQ(error_of(CountingMode::PerThread, Domain::User, two.unprivileged()), "");
  const std::string k = error_of(CountingMode::PerThread, Domain::All, two.unprivileged());
  EXPECT_NE(k.find("needs 1 or lower"), std::string::npos) << k;
  EXPECT_NE(k.find("--domain user"), std::string::npos) << k;

  ParanoidFile one(1);
  const std::string c = error_of(CountingMode::PerCpu, Domain::All, one.unprivileged());
  EXPECT_NE(c.find("per-CPU"), std::string::npos) << c;
  EXPECT_NE(c.find("perf_event_paranoid=0"), std::string::npos) << c;
  EXPECT_EQ(error_of(CountingMode::PerCpu, Domain::All, {one.path, true}), "")
      << "CAP_PERFMON / CAP_SYS_ADMIN bypass the setting";
}

TEST(ProfPermissions, AutoDomainFallsBackToUserCode) {
  ParanoidFile two(2), one(1);
  EXPECT_EQ(effective_domain(CountingMode::PerThread, Domain::Auto, two.unprivileged()),
            Domain::User);
  EXPECT_EQ(effective_domain(CountingMode::PerThread, Domain::Auto, one.unprivileged()),
            Domain::All);
  EXPECT_EQ(effective_domain(CountingMode::PerThread, Domain::Kernel, two.unprivileged()),
            Domain::Kernel);
}

TEST(ProfPermissions, MissingSysctlMeansNoPerfEvents) {
  const std::string e =
      error_of(CountingMode::PerThread, Domain::User, {"/nonexistent/perf_event_paranoid", false});
  EXPECT_NE(e.find("no perf events"), std::string::npos) << e;
}

TEST(ProfPermissions, ASessionChecksBeforeOpeningAnything) {
  ParanoidFile three(3);
  SessionOptions o;
  o.events = {"task-clock"};
  o.counting.permissions = three.unprivileged();
  try {
    Session s(o);
    FAIL() << "the session must refuse";
  } catch (const telar::Error& e) {
    EXPECT_NE(std::string(e.what()).find("perf_event_paranoid"), std::string::npos) << e.what();
  }
}

TEST(ProfCounters, TooManyEventsForOneGroupWithoutMultiplexing) {
  SessionOptions o;
  o.events = {"task-clock", "cycles", "instructions", "branch-misses"};
  o.counting.multiplex = false;
  o.counting.counter_limit = 2;
  try {
    Session s(o);
    FAIL() << "three hardware events cannot share a group of two counters";
  } catch (const telar::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("too many events"), std::string::npos) << m;
    EXPECT_NE(m.find("3 hardware counters needed, the PMU has 2"), std::string::npos) << m;
    EXPECT_NE(m.find("--no-multiplex"), std::string::npos) << m;
  }
  o.counting.multiplex = true;  // the same events multiplexed are fine
  EXPECT_NO_THROW(Session{o});
}

TEST(ProfCpuList, ParsesLinuxCpuLists) {
  EXPECT_EQ(parse_cpu_list("2-5,0,9"), (std::vector<int>{0, 2, 3, 4, 5, 9}));
  EXPECT_EQ(format_cpu_list({0, 2, 3, 4, 5, 9}), "0,2-5,9");
  EXPECT_THROW(parse_cpu_list("3-1"), telar::Error);
  EXPECT_THROW(parse_cpu_list("a"), telar::Error);
  EXPECT_THROW(check_cpus_online({1 << 15}), telar::Error);
}
