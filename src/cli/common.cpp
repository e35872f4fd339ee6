#include "cli/common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/parse.hpp"
#include "core/threads.hpp"

namespace telar::cli {

namespace {

// The names of `app`'s options and of its sub-commands' options ("--epochs", "-h").
std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  const auto add = [&](const CLI::App& a) {
    for (const CLI::Option* opt : a.get_options()) {
      for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
      for (const std::string& n : opt->get_snames()) names.push_back("-" + n);
    }
  };
  add(app);
  for (const CLI::App* sub : app.get_subcommands({})) add(*sub);
  return names;
}

// What was wrong, in the user's words where CLI11's are not: an unknown option or sub-command,
// with the nearest one that exists.
std::string explain(const CLI::App& app, const Args& args, const CLI::ParseError& error) {
  const std::vector<std::string> options = option_names(app);
  for (const std::string& a : args) {
    if (a.size() < 2 || a[0] != '-' || a == "--" ||
        std::isdigit(static_cast<unsigned char>(a[1])) || a[1] == '.')
      continue;  // a value (-1, -0.5), not an option
    const std::string name = a.substr(0, a.find('='));
    if (std::find(options.begin(), options.end(), name) != options.end()) continue;
    const std::string near = closest_match(name, options);
    return fmt::format("unknown option '{}'{}", name,
                       near.empty() ? "" : fmt::format(" (did you mean {}?)", near));
  }
  std::vector<std::string> subcommands;
  for (const CLI::App* sub : app.get_subcommands({})) subcommands.push_back(sub->get_name());
  if (!subcommands.empty()) {
    // The first word that is neither an option nor an option's value.
    auto first = args.begin();
    while (first != args.end() && first->rfind("-", 0) == 0) {
      const CLI::Option* opt = app.get_option_no_throw(first->substr(0, first->find('=')));
      const bool valued =
          opt && opt->get_expected_min() > 0 && first->find('=') == std::string::npos;
      ++first;
      if (valued && first != args.end()) ++first;
    }
    if (first != args.end() &&
        std::find(subcommands.begin(), subcommands.end(), *first) == subcommands.end()) {
      const std::string near = closest_match(*first, subcommands);
      return fmt::format("unknown sub-command '{}'{}; give one of {}", *first,
                         near.empty() ? "" : fmt::format(" (did you mean {}?)", near),
                         fmt::join(subcommands, ", "));
    }
  }
  return error.what();
}

}  // namespace

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
    fail("{}; see `telar {} --help`", explain(app, args, e), command);
  }
  return true;
}

void print_json(const nlohmann::json& result) {
  std::fflush(stderr);
  std::cout << result.dump() << std::endl;
}

CLI::Validator at_least(long long min) {
  return CLI::Validator(
      [min](std::string& value) -> std::string {
        long long v = 0;
        std::size_t used = 0;
        try {
          v = std::stoll(value, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != value.size() || used == 0)
          return fmt::format("'{}' is not a whole number; give one >= {}", value, min);
        if (v < min) return fmt::format("{} is too small; give a whole number >= {}", value, min);
        return "";
      },
      fmt::format("INT>={}", min));
}

CLI::Validator positive_real(bool allow_zero) {
  return CLI::Validator(
      [allow_zero](std::string& value) -> std::string {
        double v = 0;
        std::size_t used = 0;
        try {
          v = std::stod(value, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        const char* want = allow_zero ? "a number >= 0" : "a number > 0";
        if (used != value.size() || used == 0 || !std::isfinite(v))
          return fmt::format("'{}' is not a finite number; give {}", value, want);
        if (v < 0 || (v == 0 && !allow_zero)) return fmt::format("{} is too small; give {}", value, want);
        return "";
      },
      allow_zero ? "NUM>=0" : "NUM>0");
}

void add_overwrite_flag(CLI::App& app, bool* overwrite, const char* what) {
  app.add_flag("--overwrite", *overwrite, fmt::format("replace the {} already in --out (else refused)", what));
}

void add_no_optimize_flag(CLI::App& app, bool* no_optimize) {
  app.add_flag("--no-optimize", *no_optimize,
               "run the model as built: no BatchNorm folding, no fusion, Dropout kept as the "
               "identity (docs/inference.md)");
}

void add_precision_option(CLI::App& app, std::string* precision, bool timed_only) {
  app.add_option(
      "--precision", *precision,
      fmt::format("fp32 (default), bf16 (convolutions and Linear on oneDNN's bf16 primitives, f32 "
                  "accumulation; needs avx512_bf16 or AMX; docs/inference.md) or int8 ({})",
                  timed_only ? "each model quantized with the ranges of the random input it is "
                               "timed on: the int8 kernels' speed does not depend on them"
                             : "a model quantized by telar quantize; the default for one; "
                               "docs/quantize.md"));
}

void add_threads_option(CLI::App& app, int* threads) {
  app.add_option("--threads", *threads, "compute threads (default: all cores)")
      ->check(at_least(0))
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            if (std::stoll(value) > max_compute_threads())
              return fmt::format("{} threads is more than telar allows ({}); this machine has {} "
                                 "cores, use at most that many for speed",
                                 value, max_compute_threads(), hardware_threads());
            return "";
          },
          ""));
}

void apply_threads(int threads) { set_compute_threads(threads); }

std::int64_t parse_bytes(const std::string& text, std::string_view what) {
  require(!text.empty(), "{} is empty; give a size such as 4G or 512M", what);
  // A number, then K, M, G or T (powers of 1024), with or without a B or iB after it.
  std::string digits = text;
  const auto strip = [&digits](std::string_view suffix) {
    const bool ends =
        digits.size() > suffix.size() &&
        std::equal(suffix.rbegin(), suffix.rend(), digits.rbegin(),
                   [](char a, char b) { return a == std::toupper(static_cast<unsigned char>(b)); });
    if (ends) digits.resize(digits.size() - suffix.size());
    return ends;
  };
  if (!strip("IB")) strip("B");
  std::int64_t scale = 1;
  const std::string units = "KMGT";
  const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(digits.back())));
  if (const auto u = units.find(last); u != std::string::npos) {
    scale = std::int64_t{1} << (10 * (u + 1));
    digits.pop_back();
  }
  double value = 0.0;
  try {
    value = parse_double(digits, what);
  } catch (const Error&) {
    fail(
        "{} '{}' is not a size: give a number of bytes, or one with K, M, G or T after it "
        "(e.g. 4G, 512M, 1.5GiB)",
        what, text);
  }
  require(value > 0, "{} must be positive, got '{}'", what, text);
  return static_cast<std::int64_t>(value * static_cast<double>(scale));
}

namespace {

// A data option's value with its file or directory made absolute: a run's options are read
// again from elsewhere (eval --checkpoint ../a/run, --resume).
std::string with_absolute_paths(const std::string& name, const std::string& value) {
  if (value.empty()) return value;
  if (name == "--train-images" || name == "--train-labels" || name == "--test-images" ||
      name == "--test-labels")
    return std::filesystem::absolute(value).string();
  if (name == "--data")
    for (const std::string prefix : {"fashion-mnist:", "mnist:"})
      if (value.rfind(prefix, 0) == 0 && value.size() > prefix.size())
        return prefix + std::filesystem::absolute(value.substr(prefix.size())).string();
  return value;
}

}  // namespace

std::vector<std::string> options_to_keep(const CLI::App& app) {
  std::vector<std::string> tokens;
  for (const CLI::Option* opt : app.get_options()) {
    const std::string name = opt->get_name();
    if (opt->count() == 0 || name == "--out" || name == "--resume" || name == "--json" ||
        name == "--quiet" || name == "--help" || name == "--overwrite")
      continue;
    if (opt->get_expected_min() == 0) {
      tokens.push_back(name);
      continue;
    }
    for (const std::string& value : opt->results())
      tokens.push_back(name + "=" + with_absolute_paths(name, value));
  }
  return tokens;
}

Args with_resumed_options(const std::filesystem::path& dir, const Args& args,
                          std::string_view command) {
  const std::filesystem::path run_json = dir / "run.json";
  require(std::filesystem::is_directory(dir),
          "--resume {}: no such directory; give the run directory telar {} wrote", dir.string(),
          command);
  require(std::filesystem::exists(run_json),
          "--resume {}: holds no run (no run.json); give the run directory telar {} wrote",
          dir.string(), command);
  const auto run = nlohmann::json::parse(read_file(run_json), nullptr, false);
  if (run.is_object() && run.contains("command") && run["command"].is_string())
    require(run["command"] == command,
            "--resume {}: holds a run of '{}', not of '{}'; give the run directory telar {} wrote",
            dir.string(), run["command"].get<std::string>(), command, command);
  if (!run.is_object() || !run.contains("config") || !run["config"].contains("options"))
    return args;
  Args merged = run["config"]["options"].get<std::vector<std::string>>();
  merged.insert(merged.end(), args.begin(), args.end());
  return merged;
}

}  // namespace telar::cli
