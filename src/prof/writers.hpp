#pragma once
// Text outputs of a profile: the tidy CSV (one row per scope × CPU × event), the derived
// metrics CSV, and the seed's colon format (`cpu:value::event`, one line per CPU and event,
// scopes in order, as `perf stat -A -x:` writes it).
#include <filesystem>
#include <string>
#include <string_view>

#include "prof/profile.hpp"

namespace telar::prof {

// Header: scope,epoch,batch,node,cpu,event,value,time_enabled,time_running,wall_ns.
// epoch/batch/node are empty where the scope has none; cpu is -1 in per-thread mode (the sum
// over the process's threads); value is scaled for multiplexing; unavailable events are left out.
std::string counters_csv(const Profile& profile);

// Header: scope,epoch,batch,node,metric,value (see derived_metrics.hpp).
std::string metrics_csv(const Profile& profile);

// One `cpu:value::event` line per recorded scope (gaps left out), CPU and available event.
std::string colon_lines(const Profile& profile);

// Checks, creating nothing, that a file could be written at `path` (its directory exists and is
// writable, or could be created); throws a one-line telar::Error naming `option` otherwise. Lets
// a command fail before doing its work instead of after.
void check_output_file(const std::filesystem::path& path, std::string_view option);
void check_output_dir(const std::filesystem::path& dir, std::string_view option);

// Appends colon lines to `path` (the seed's append semantics for repeated runs), atomically:
// the old content plus the new lines are written to a temporary file and renamed.
void append_colon_file(const Profile& profile, const std::filesystem::path& path);

}  // namespace telar::prof
