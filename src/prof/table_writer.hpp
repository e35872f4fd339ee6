#pragma once
// The terminal table of a profile. One scope (telar prof run) prints like perf stat: one line
// per event with its value and how much of the time it was on a counter, then the derived
// metrics. Nested scopes print one row per run, epoch, eval and region scope (with their gaps),
// the mean batch, and each node's forward and backward summed over batches.
#include <string>

#include "prof/profile.hpp"

namespace telar::prof {

struct TableOptions {
  std::size_t max_rows = 60;  // rows beyond this are summarised in one line
};

std::string format_table(const Profile& profile, const TableOptions& options = {});

// 1234567 -> "1,234,567".
std::string group_digits(std::int64_t value);

}  // namespace telar::prof
