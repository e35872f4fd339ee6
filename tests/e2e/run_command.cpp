#include "run_command.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace telar::testing {

namespace fs = std::filesystem;

std::string telar_binary() {
  return std::string(TELAR_BINARY_DIR) + "/telar";
}

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

int run_telar_and_signal(const std::vector<std::string>& args, const std::function<bool()>& ready,
                         int signal, int grace_ms, double patience_seconds) {
  std::vector<std::string> words = {telar_binary()};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return -2;
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  bool started = false;
  for (int i = 0; i < static_cast<int>(patience_seconds * 20) && !started; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid)  // finished before it was ready
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    started = ready();
  }
  if (started) std::this_thread::sleep_for(std::chrono::milliseconds(grace_ms));
  ::kill(pid, started ? signal : SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!started) return -2;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool run_json_says_running(const std::string& run_dir) {
  std::error_code ec;
  const fs::path run_json = fs::path(run_dir) / "run.json";
  return fs::exists(run_json, ec) && slurp(run_json).find("\"running\"") != std::string::npos;
}

CommandResult run_telar(const std::vector<std::string>& args) {
  const fs::path dir = fresh_temp_dir("cmd");
  const fs::path out = dir / "out", err = dir / "err";
  pid_t pid = fork();
  if (pid == 0) {
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    std::vector<std::string> all = {telar_binary()};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  CommandResult r;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove_all(dir);
  return r;
}

CommandResult run_shell(const std::string& command) {
  const fs::path dir = fresh_temp_dir("sh");
  const std::string line = command + " >" + (dir / "out").string() + " 2>" + (dir / "err").string();
  int status = std::system(line.c_str());
  CommandResult r;
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  fs::remove_all(dir);
  return r;
}

std::string fresh_temp_dir(const std::string& name) {
  static int counter = 0;
  fs::path p = fs::temp_directory_path() / ("telar_e2e_" + name + "_" + std::to_string(::getpid()) +
                                            "_" + std::to_string(counter++));
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

std::string last_line(const std::string& out) {
  const auto end = out.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  const auto start = out.rfind('\n', end);
  return out.substr(start == std::string::npos ? 0 : start + 1,
                    end - (start == std::string::npos ? 0 : start + 1) + 1);
}

int count_files(const std::string& dir) {
  if (!fs::exists(dir)) return 0;
  int n = 0;
  for (auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) ++n;
  return n;
}

}  // namespace telar::testing
