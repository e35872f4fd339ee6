// telar energy -- CMD ARGS: runs any command while sampling the machine's energy meters;
// writes the samples (energy.csv) and a summary (run.json) to a run directory, prints the
// summary on stderr (stdout stays the command's) and exits with the command's status.
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/common.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/parse.hpp"
#include "dist/energy/sampler.hpp"
#include "report/run_dir.hpp"
#include "report/run_record.hpp"

namespace telar::cli {

namespace fs = std::filesystem;

namespace {

// The command's executable as execvp would find it, or "" if it would not.
std::string find_executable(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  for (const std::string& dir : split(path ? path : "/usr/bin:/bin", ':')) {
    const fs::path p = fs::path(dir.empty() ? "." : dir) / name;
    if (::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p)) return p.string();
  }
  return "";
}

}  // namespace

int run_energy(const Args& args) {
  CLI::App app{"Run a command while sampling the energy meters (RAPL package and DRAM, NVIDIA "
               "GPUs); write energy.csv and a summary: telar energy [OPTIONS] -- CMD ARGS...",
               "energy"};
  double interval_ms = 500.0;
  std::string out, powercap_root, gpus, meters = "rapl,nvml";
  bool json = false, overwrite = false;
  app.add_option("--interval", interval_ms, "sampling interval in ms (the thesis' tool: 500)")
      ->check(positive_real());
  app.add_option("--out", out, "run directory (default: runs/energy-DATE-TIME)");
  add_overwrite_flag(app, &overwrite);
  app.add_option("--powercap-root", powercap_root,
                 "RAPL powercap tree (default $TELAR_POWERCAP_ROOT or /sys/class/powercap)");
  app.add_option("--meters", meters, "meters to read: rapl, nvml or both (default rapl,nvml)");
  app.add_option("--gpus", gpus, "GPU indices the command uses (e.g. 0,1); the others count as idle");
  app.add_flag("--json", json, "print the summary as one JSON object on the last stdout line");
  // Everything after "--" is the command, untouched.
  Args own = args, command;
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i] == "--") {
      own.assign(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(i));
      command.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
  int code = 0;
  if (!parse(app, own, "energy", &code)) return code;
  require(!command.empty(), "give the command to measure after --, e.g. telar energy -- telar "
                            "train --model mnist_cnn");
  const std::string exe = find_executable(command[0]);
  require(!exe.empty(), "cannot run '{}': not found (or not executable) in PATH", command[0]);
  energy::MeterOptions meter_options{powercap_root};
  energy::select_meters(meter_options, meters);
  std::set<int> used_gpus;
  if (!gpus.empty())
    for (std::int64_t g : parse_index_list(gpus, ',', "--gpus")) used_gpus.insert(static_cast<int>(g));

  report::RunDirectory run(out.empty() ? report::default_run_path("energy") : fs::path(out),
                           report::reuse_for(overwrite));
  auto sampler = energy::make_sampler(interval_ms / 1000.0, meter_options);
  sampler->set_used_gpus(used_gpus);
  std::string line;
  for (const auto& a : command) line += (line.empty() ? "" : " ") + a;
  const nlohmann::json config = {{"command", command}, {"interval_ms", interval_ms}};
  report::RunRecord record(run, "energy", config);

  // Like time(1): the terminal's interrupt reaches the command; telar waits and reports.
  struct sigaction ignore {}, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  std::cout.flush();
  std::cerr.flush();
  Stopwatch clock;
  sampler->start();
  const pid_t pid = fork();
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    std::vector<char*> argv;
    for (auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    std::fprintf(stderr, "telar energy: cannot run %s\n", exe.c_str());
    _exit(127);
  }
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
  const double seconds = clock.seconds();
  const energy::EnergySummary summary = sampler->stop();
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  require(pid > 0, "could not start '{}' (fork failed)", line);
  const int exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

  if (summary.measured) sampler->write_csv(run.file("energy.csv"));
  nlohmann::json result = {{"exit_status", exit_status},
                           {"seconds", seconds},
                           {"command_line", line},
                           {"energy", summary.to_json()},
                           {"run_dir", run.path().string()}};
  record.finish(result);
  std::cerr << fmt::format("telar energy: '{}' exited with status {} after {:.2f} s\n", line,
                           exit_status, seconds)
            << (summary.measured ? summary.format() : "")
            << fmt::format("run directory: {}{}\n", run.path().string(),
                           summary.measured ? " (energy.csv, run.json)" : " (run.json)");
  if (json) print_json(result);
  return exit_status;
}

}  // namespace telar::cli
