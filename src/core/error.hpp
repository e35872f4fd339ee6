#pragma once
// telar::Error: the one exception type library code throws for problems a user can act on.
// Its message says what is wrong, where, and what to do. The CLI prints it on one line and
// exits with status 2. Library code never calls exit() or abort().
#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace telar {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Throws telar::Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

// Checks a condition that bad input can violate; throws telar::Error otherwise.
template <typename... Args>
void require(bool condition, fmt::format_string<Args...> format, Args&&... args) {
  if (!condition) throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace telar
