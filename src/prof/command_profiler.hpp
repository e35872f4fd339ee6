#pragma once
// `telar prof run -e EVENTS -- CMD ARGS`: runs a command under counters. In per-thread mode the
// counters are attached to the new process before it execs (and start at the exec), so every
// thread and child process it starts is counted; in per-CPU mode the listed CPUs are counted for
// as long as the command runs. The whole command is one `run` scope.
#include <string>
#include <vector>

#include "prof/profile.hpp"
#include "prof/session.hpp"

namespace telar::prof {

struct CommandProfile {
  int exit_status = 0;  // the command's exit status; 128 + signal number if a signal ended it
  Profile profile;
};

// Throws telar::Error if the command cannot be started (not found, not executable) or the
// counters cannot be opened; the command is not left running in that case.
CommandProfile profile_command(const std::vector<std::string>& argv, SessionOptions options);

}  // namespace telar::prof
