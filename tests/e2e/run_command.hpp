#pragma once
// Runs the built telar executable (or any command) for end-to-end tests: exit status, stdout
// and stderr.
#include <functional>
#include <string>
#include <vector>

namespace telar::testing {

struct CommandResult {
  int status = -1;
  std::string out;
  std::string err;
};

// Runs `telar ARGS` (the binary of this build), without a shell: arguments are passed as is.
CommandResult run_telar(const std::vector<std::string>& args);
// Runs `telar ARGS` (output discarded), waits up to `patience_seconds` until `ready()` says the
// work is under way (polled every 50 ms), lets it run `grace_ms` more, then sends `signal`.
// Returns the exit status, or -1 where the process did not exit by itself (killed by the
// signal), -2 where it never became ready (it is then killed).
int run_telar_and_signal(const std::vector<std::string>& args, const std::function<bool()>& ready,
                         int signal, int grace_ms = 0, double patience_seconds = 60.0);
// Whether `run_dir`/run.json exists and says "running" (a `ready` for run_telar_and_signal).
bool run_json_says_running(const std::string& run_dir);
// Runs a shell command line.
CommandResult run_shell(const std::string& command);
std::string telar_binary();
// A fresh empty directory under the system temp directory.
std::string fresh_temp_dir(const std::string& name);
// Number of regular files below `dir` (0 if it does not exist).
int count_files(const std::string& dir);
// The last non-empty line of `out` (a command's --json result).
std::string last_line(const std::string& out);

}  // namespace telar::testing
