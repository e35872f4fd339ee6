#pragma once
// Options shared by the `telar prof` subcommands that count (run, matmul).
#include <filesystem>
#include <string>

#include "report/run_dir.hpp"
#include "cli/common.hpp"
#include "prof/session.hpp"

namespace telar::cli {

struct ProfCountingCli {
  std::string events;
  std::string cpus;
  std::string domain = "auto";
  bool no_multiplex = false;
  std::string out;
  bool overwrite = false;
  std::string colon;
  bool json = false;
  report::RunReuse reuse() const {
    return report::reuse_for(overwrite);
  }
};

// -e/--events, --cpus, --domain, --no-multiplex, --out, --overwrite, --colon, --json.
void add_prof_counting_options(CLI::App& app, ProfCountingCli& cli, const std::string& events_help);

// Session options from the parsed flags (events from a file or a comma list).
prof::SessionOptions prof_session_options(const ProfCountingCli& cli);

// The run directory: --out, or runs/<prefix>-<timestamp>; checked writable (creating nothing).
std::filesystem::path prof_output_dir(const ProfCountingCli& cli, const std::string& prefix);

// run.json's "config" for these flags.
nlohmann::json prof_config_json(const prof::SessionOptions& options);

int run_prof_list(const Args& args);
int run_prof_run(const Args& args);
int run_prof_matmul(const Args& args);

}  // namespace telar::cli
