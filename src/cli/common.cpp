#include "cli/common.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <iostream>

#include "core/error.hpp"
#include "core/threads.hpp"

namespace telar::cli {

bool parse(CLI::App& app, const Args& args, const std::string& command, int* exit_code) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  // A repeated option takes its last value (scripts append overrides to a base command).
  for (CLI::Option* opt : app.get_options())
    if (opt->get_items_expected_max() == 1) opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  for (CLI::App* sub : app.get_subcommands({}))
    for (CLI::Option* opt : sub->get_options())
      if (opt->get_items_expected_max() == 1) opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    *exit_code = 0;
    return false;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    *exit_code = 0;
    return false;
  } catch (const CLI::ParseError& e) {
    fail("{}; see `telar {} --help`", e.what(), command);
  }
  return true;
}

void print_json(const nlohmann::json& result) {
  std::fflush(stderr);
  std::cout << result.dump() << std::endl;
}

void add_threads_option(CLI::App& app, int* threads) {
  app.add_option("--threads", *threads, "compute threads (default: all cores)")
      ->check(CLI::NonNegativeNumber);
}

void apply_threads(int threads) { set_compute_threads(threads); }

}  // namespace telar::cli
