// telar prof run's engine: a command profiled from its exec to its exit, children included.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "prof/command_profiler.hpp"

using namespace telar::prof;

namespace {
SessionOptions task_clock() {
  SessionOptions o;
  o.events = {"task-clock", "page-faults"};
  return o;
}
}  // namespace

TEST(ProfCommand, ReturnsTheCommandsExitStatusAndOneRunScope) {
  const auto ok = profile_command({"true"}, task_clock());
  EXPECT_EQ(ok.exit_status, 0);
  ASSERT_EQ(ok.profile.records.size(), 1u);
  EXPECT_EQ(ok.profile.records[0].path, "run");
  EXPECT_GT(ok.profile.total(ok.profile.records[0], 0), 0);
  EXPECT_EQ(profile_command({"sh", "-c", "exit 3"}, task_clock()).exit_status, 3);
}

TEST(ProfCommand, CountsTheCommandsChildProcesses) {
  // The shell's busy loop runs in a child process (a subshell); inherit must count it. It burns
  // well over 5 ms of CPU, which a shell that only waits does not.
  const auto r = profile_command(
      {"sh", "-c", "( i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done ); true"}, task_clock());
  EXPECT_EQ(r.exit_status, 0);
  EXPECT_GT(r.profile.total(r.profile.records[0], 0), 5'000'000);
}

TEST(ProfCommand, AMissingCommandIsAnError) {
  try {
    profile_command({"telar-no-such-command"}, task_clock());
    FAIL();
  } catch (const telar::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot run 'telar-no-such-command'"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(profile_command({}, task_clock()), telar::Error);
}
