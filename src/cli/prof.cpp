// telar prof {list,run,matmul}: the hardware-counter profiler (src/prof/).
#include <fmt/format.h>

#include <iostream>

#include "cli/prof_options.hpp"
#include "core/error.hpp"
#include "core/parse.hpp"
#include "prof/counting_options.hpp"
#include "prof/cpu_list.hpp"
#include "prof/event_list.hpp"
#include "prof/permissions.hpp"
#include "prof/writers.hpp"
#include "report/run_dir.hpp"

namespace telar::cli {

void add_prof_counting_options(CLI::App& app, ProfCountingCli& cli,
                               const std::string& events_help) {
  app.add_option("-e,--events", cli.events, events_help);
  app.add_option("--cpus", cli.cpus,
                 "count system-wide on these CPUs (e.g. 2-31) instead of the measured threads");
  app.add_option("--domain", cli.domain, "privilege domain: user, kernel, all or auto (default)");
  app.add_flag("--no-multiplex", cli.no_multiplex,
               "one counter group per thread/CPU; fail if the events do not fit the PMU");
  app.add_option("--out", cli.out, "run directory (default: runs/prof-...-TIMESTAMP)");
  add_overwrite_flag(app, &cli.overwrite);
  app.add_option("--colon", cli.colon, "also append `cpu:value::event` lines to this file");
  app.add_flag("--json", cli.json, "print the result as one JSON object on the last line");
}

prof::SessionOptions prof_session_options(const ProfCountingCli& cli) {
  prof::SessionOptions o;
  o.events = prof::parse_event_argument(cli.events);
  o.counting.domain = prof::parse_domain(cli.domain);
  o.counting.multiplex = !cli.no_multiplex;
  if (!cli.cpus.empty()) {
    o.counting.mode = prof::CountingMode::PerCpu;
    o.counting.cpus = prof::parse_cpu_list(cli.cpus);
    prof::check_cpus_online(o.counting.cpus);
  }
  return o;
}

std::filesystem::path prof_output_dir(const ProfCountingCli& cli, const std::string& prefix) {
  const std::filesystem::path dir =
      cli.out.empty() ? report::default_run_path(prefix) : std::filesystem::path(cli.out);
  prof::check_output_dir(dir, "--out");
  report::check_run_path(dir, cli.reuse());
  if (!cli.colon.empty()) prof::check_output_file(cli.colon, "--colon");
  return dir;
}

nlohmann::json prof_config_json(const prof::SessionOptions& options) {
  const auto& c = options.counting;
  return {{"events", options.events},
          {"mode", prof::mode_name(c.mode)},
          {"cpus", prof::format_cpu_list(c.cpus)},
          {"domain", prof::domain_name(c.domain)},
          {"multiplex", c.multiplex},
          {"scopes", options.scopes.str()}};
}

int run_prof(const Args& args) {
  static const char* usage =
      "usage: telar prof COMMAND [ARGS]\n\n"
      "  list                     every known event and whether it can be counted here\n"
      "  run -e EVENTS -- CMD...  run a command under counters (table, CSV, report.html)\n"
      "  matmul                   the seed's validation benchmark: naive -O0/-O3 and BLAS\n"
      "                           double matmul, time and counts per size\n\n"
      "EVENTS is a comma-separated list of names or an events file (one name per line,\n"
      "# comments). `telar prof COMMAND --help` lists a command's options.\n";
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << usage;
    return args.empty() ? 2 : 0;
  }
  const Args rest(args.begin() + 1, args.end());
  if (args[0] == "list") return run_prof_list(rest);
  if (args[0] == "run") return run_prof_run(rest);
  if (args[0] == "matmul") return run_prof_matmul(rest);
  const std::string near = closest_match(args[0], {"list", "run", "matmul"});
  fail("unknown prof command '{}'{}; choose list, run or matmul", args[0],
       near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near));
}

}  // namespace telar::cli
