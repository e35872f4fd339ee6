#include "prof/writers.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "core/error.hpp"
#include "core/files.hpp"
#include "prof/derived_metrics.hpp"

namespace telar::prof {

namespace fs = std::filesystem;

namespace {

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string index_field(std::int64_t i) {
  return i < 0 ? std::string() : std::to_string(i);
}

std::string scope_columns(const ScopeRecord& r) {
  return fmt::format("{},{},{},{}", csv_field(r.path), index_field(r.epoch), index_field(r.batch),
                     csv_field(r.node));
}

}  // namespace

std::string counters_csv(const Profile& profile) {
  std::string out = "scope,epoch,batch,node,cpu,event,value,time_enabled,time_running,wall_ns\n";
  const auto events = profile.available_events();
  for (const auto& r : profile.records) {
    const std::string scope = scope_columns(r);
    for (std::size_t c = 0; c < profile.cpus.size(); ++c)
      for (std::size_t e : events) {
        const Count& n = profile.count(r, c, e);
        out += fmt::format("{},{},{},{},{},{},{}\n", scope, profile.cpus[c],
                           csv_field(profile.events[e].name), n.value, n.time_enabled,
                           n.time_running, r.wall_ns);
      }
  }
  return out;
}

std::string metrics_csv(const Profile& profile) {
  std::string out = "scope,epoch,batch,node,metric,value\n";
  for (const auto& r : profile.records) {
    const std::string scope = scope_columns(r);
    for (const auto& m : derive_metrics(totals_of(profile, r)))
      out += fmt::format("{},{},{}\n", scope, m.name, m.value);
  }
  return out;
}

std::string colon_lines(const Profile& profile) {
  std::string out;
  const auto events = profile.available_events();
  for (const auto& r : profile.records) {
    if (r.kind == ScopeKind::Gap) continue;
    for (std::size_t c = 0; c < profile.cpus.size(); ++c)
      for (std::size_t e : events)
        out += fmt::format("{}:{}::{}\n", profile.cpus[c], profile.count(r, c, e).value,
                           profile.events[e].name);
  }
  return out;
}

namespace {

// Whether a file can be created in `dir`, tried for real: permission bits do not tell for root,
// for read-only mounts or for /proc. The probe file is removed at once.
bool can_create_in(const fs::path& dir) {
  std::string name = (dir / ".telar-write-probe-XXXXXX").string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return false;
  ::close(fd);
  ::unlink(name.c_str());
  return true;
}

}  // namespace

void check_output_dir(const fs::path& dir, std::string_view option) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    require(fs::is_directory(dir, ec),
            "{}: '{}' exists and is not a directory; choose another path", option, dir.string());
    require(can_create_in(dir), "{}: directory '{}' is not writable ({}); choose a writable path",
            option, dir.string(), std::strerror(errno));
    return;
  }
  // The nearest existing ancestor must be a writable directory for the rest to be created.
  fs::path ancestor = fs::absolute(dir, ec).parent_path();
  while (!ancestor.empty() && !fs::exists(ancestor, ec) && ancestor != ancestor.root_path())
    ancestor = ancestor.parent_path();
  require(fs::is_directory(ancestor, ec) && can_create_in(ancestor),
          "{}: cannot create '{}' because '{}' is not a writable directory; choose a writable "
          "path",
          option, dir.string(), ancestor.string());
}

void check_output_file(const fs::path& path, std::string_view option) {
  std::error_code ec;
  require(!fs::is_directory(path, ec), "{}: '{}' is a directory; give a file name", option,
          path.string());
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  check_output_dir(parent, option);
  if (fs::exists(path, ec))
    require(::access(path.c_str(), W_OK) == 0,
            "{}: '{}' is not writable ({}); choose another "
            "file",
            option, path.string(), std::strerror(errno));
}

void append_colon_file(const Profile& profile, const fs::path& path) {
  check_output_file(path, "--colon");
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  std::string content = fs::exists(path, ec) ? read_file(path) : std::string();
  if (!content.empty() && content.back() != '\n') content += '\n';
  write_file_atomic(path, content + colon_lines(profile));
}

}  // namespace telar::prof
