// telar prof run -e EVENTS [--cpus LIST] -- CMD ARGS: a command under counters.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "cli/prof_options.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "prof/command_profiler.hpp"
#include "prof/html_report.hpp"
#include "prof/table_writer.hpp"
#include "prof/writers.hpp"
#include "report/run_dir.hpp"

namespace telar::cli {

int run_prof_run(const Args& args) {
  // Everything after `--` is the command, untouched by option parsing.
  const auto dashes = std::find(args.begin(), args.end(), "--");
  const Args options_part(args.begin(), dashes);
  const std::vector<std::string> command = dashes == args.end()
                                               ? std::vector<std::string>{}
                                               : std::vector<std::string>(dashes + 1, args.end());

  CLI::App app{
      "Run a command under hardware/software counters: every thread and child process "
      "it starts (or, with --cpus, everything on those CPUs). Prints a table and "
      "writes counters.csv, metrics.csv and report.html.",
      "prof run"};
  app.footer("The command to profile follows `--`: telar prof run -e EVENTS [OPTIONS] -- CMD "
             "[ARGS...]\nexample: telar prof run -e task-clock,page-faults -- telar infer "
             "--model mnist_cnn");
  ProfCountingCli cli;
  add_prof_counting_options(app, cli, "events: comma-separated names or an events file");
  app.get_option("--events")->required();
  int code = 0;
  if (!parse(app, options_part, "prof run", &code)) return code;
  require(!command.empty(),
          "no command to profile; write it after --, e.g. `telar prof run -e task-clock -- ls`");

  prof::SessionOptions options = prof_session_options(cli);
  const auto dir = prof_output_dir(cli, "prof-run");
  const auto result = prof::profile_command(command, options);
  const prof::Profile& profile = result.profile;

  std::string quoted;
  for (const auto& a : command) quoted += (quoted.empty() ? "" : " ") + a;
  std::cout << fmt::format("\ncounters for '{}' (exit status {}):\n", quoted, result.exit_status)
            << prof::format_table(profile) << std::flush;

  report::RunDirectory run(dir, cli.reuse());
  nlohmann::json config = prof_config_json(options);
  config["command"] = command;
  run.write_run_json("prof run", config, {{"exit_status", result.exit_status}});
  prof::write_profile_files(
      profile, dir, "telar prof run: " + quoted,
      {{"command", quoted}, {"exit status", std::to_string(result.exit_status)}});
  if (!cli.colon.empty()) prof::append_colon_file(profile, cli.colon);
  log::info("wrote {}", dir.string());

  if (cli.json) {
    nlohmann::json values = nlohmann::json::object();
    for (std::size_t e : profile.available_events())
      values[profile.events[e].name] = profile.total(profile.records.front(), e);
    print_json({{"exit_status", result.exit_status},
                {"out", dir.string()},
                {"wall_ns", profile.records.front().wall_ns},
                {"events", values}});
  }
  return result.exit_status;
}

}  // namespace telar::cli
