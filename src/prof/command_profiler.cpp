#include "prof/command_profiler.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace telar::prof {

namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0) fail("cannot create a pipe: {}", std::strerror(errno));
  }
  ~Pipe() { close_both(); }
  void close_end(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
  void close_both() { close_end(0), close_end(1); }
};

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 127;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 127;
}

// While the command runs, Ctrl-C and Ctrl-\ go to it (same process group) and not to telar, so
// that telar still writes what was counted when the user interrupts the command.
class IgnoreInterrupts {
 public:
  IgnoreInterrupts() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGINT, &ignore, &old_int_);
    ::sigaction(SIGQUIT, &ignore, &old_quit_);
  }
  ~IgnoreInterrupts() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGQUIT, &old_quit_, nullptr);
  }

 private:
  struct sigaction old_int_ {
  }, old_quit_{};
};

}  // namespace

CommandProfile profile_command(const std::vector<std::string>& argv, SessionOptions options) {
  require(!argv.empty(),
          "no command to profile; write it after --, e.g. `telar prof run -e "
          "task-clock -- ls -l`");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  Pipe go, exec_error;
  const pid_t child = ::fork();
  if (child < 0) fail("cannot start '{}': fork failed: {}", argv[0], std::strerror(errno));
  if (child == 0) {
    // The child waits until its counters are open, then becomes the command. A failed exec is
    // reported to the parent through a pipe that a successful exec closes.
    char byte = 0;
    if (::read(go.fd[0], &byte, 1) != 1) ::_exit(127);
    ::execvp(args[0], args.data());
    const int err = errno;
    [[maybe_unused]] auto ignored = ::write(exec_error.fd[1], &err, sizeof err);
    ::_exit(127);
  }
  go.close_end(0);
  exec_error.close_end(1);

  CommandProfile result;
  bool reaped = false;
  try {
    if (options.counting.mode == CountingMode::PerThread) {
      options.counting.target_pid = child;
      options.counting.enable_on_exec = true;
    }
    Session session(std::move(options));
    IgnoreInterrupts ignore;
    session.begin(ScopeLabel::run());
    const char byte = 1;
    if (::write(go.fd[1], &byte, 1) != 1)
      fail("cannot start '{}': {}", argv[0], std::strerror(errno));
    go.close_end(1);
    int err = 0;
    ssize_t got;
    while ((got = ::read(exec_error.fd[0], &err, sizeof err)) < 0 && errno == EINTR) {
    }
    if (got == static_cast<ssize_t>(sizeof err)) {
      wait_for(child);
      reaped = true;
      fail("cannot run '{}': {}; check the command name and PATH", argv[0], std::strerror(err));
    }
    result.exit_status = wait_for(child);
    reaped = true;
    session.end(ScopeKind::Run);
    result.profile = session.finish();
  } catch (...) {
    if (!reaped) {
      ::kill(child, SIGKILL);
      wait_for(child);
    }
    throw;
  }
  return result;
}

}  // namespace telar::prof
