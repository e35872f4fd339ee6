#pragma once
// Helpers shared by the subcommands: CLI11 set-up with telar's conventions, JSON result line.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.hpp"

namespace telar::cli {

// Parses args with app; on --help prints help and returns 0 through *exit_code; on a parse
// error throws telar::Error (one line, exit 2). Returns false when the command should stop.
bool parse(CLI::App& app, const Args& args, const std::string& command, int* exit_code);

// Prints the --json result: one JSON object, the last line of stdout.
void print_json(const nlohmann::json& result);

// A check for integer options: the value must be a whole number >= min. Its message says what
// was given and what to give (CLI11's own range message prints DBL_MAX in full).
CLI::Validator at_least(long long min);
// The same for real-valued options: a finite number > 0 (or >= 0 with allow_zero).
CLI::Validator positive_real(bool allow_zero = false);

// Adds --overwrite: replace the run already in --out (refused without it; report::reuse_for).
// `what` --out holds: "run" (a run directory) or "file".
void add_overwrite_flag(CLI::App& app, bool* overwrite, const char* what = "run");

// Adds --no-optimize: run the model as built, without inference compilation's graph passes.
void add_no_optimize_flag(CLI::App& app, bool* no_optimize);

// Adds --precision fp32|bf16|int8 (backend::Precision; parsed with backend::parse_precision).
// `timed_only`: the command times models at int8 with ranges of random input (adapt, lut), not
// a model quantized by telar quantize.
void add_precision_option(CLI::App& app, std::string* precision, bool timed_only = false);

// Adds --threads (default: all cores) and applies it after parsing via apply_threads().
void add_threads_option(CLI::App& app, int* threads);
void apply_threads(int threads);

// "512M", "4G", "1500000" (bytes; K, M, G, T are powers of 1024); `what` names the option in
// errors.
std::int64_t parse_bytes(const std::string& text, std::string_view what);

// The options a run was started with, as tokens (--name=value, or --name for a flag), so that
// `--resume DIR` can continue with them: output and verbosity options are left out.
std::vector<std::string> options_to_keep(const CLI::App& app);

// `--resume DIR` continues with the options the run was started with (run.json's
// config.options); options given again win (a repeated option takes its last value), e.g. a
// larger --epochs. Throws one line where `dir` is missing, holds no run, or holds a run of
// another command than `command`.
Args with_resumed_options(const std::filesystem::path& dir, const Args& args,
                          std::string_view command);

}  // namespace telar::cli
