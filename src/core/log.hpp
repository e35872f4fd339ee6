#pragma once
// Messages for the user go to stderr; results go to stdout (so `--json` output stays clean).
#include <fmt/format.h>

#include <cstdio>

namespace telar::log {

enum class Level { Quiet, Normal, Verbose };
void set_level(Level level);
Level level();

template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
  if (level() == Level::Quiet) return;
  fmt::print(stderr, "{}\n", fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
void verbose(fmt::format_string<Args...> format, Args&&... args) {
  if (level() != Level::Verbose) return;
  fmt::print(stderr, "{}\n", fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
  fmt::print(stderr, "warning: {}\n", fmt::format(format, std::forward<Args>(args)...));
}

// Prints `message` once per process per `key` (e.g. "no RAPL meter on this machine").
void notice_once(const char* key, const std::string& message);

}  // namespace telar::log
