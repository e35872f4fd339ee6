#pragma once
// Checks the end-to-end tests of commands share: a --json result, and bad input refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "run_command.hpp"

namespace telar::testing {

// The JSON object a command printed last (its --json result).
inline nlohmann::json last_json(const std::string& out) { return nlohmann::json::parse(last_line(out)); }

// Refused on bad input: exit status 2 and one line on stderr that contains `needle`.
inline void expect_refused(const CommandResult& r, const std::string& needle) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << "stderr: " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr: " << r.err;
}

}  // namespace telar::testing
