#pragma once
// A run directory: every command that does work writes one, with run.json (resolved
// configuration, versions, machine), tidy CSV metrics, stats and report.html.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/files.hpp"

namespace telar::report {

// Facts about this machine and build, for run.json.
nlohmann::json machine_info();

// What a command may do with an --out that already holds a run (a run.json): refuse it (the
// default: a finished run is never overwritten by accident), replace it (--overwrite), or go on
// with it (--resume of that same run).
enum class RunReuse { Refuse, Replace, Continue };
// What an --overwrite flag asks for.
inline RunReuse reuse_for(bool overwrite) {
  return overwrite ? RunReuse::Replace : RunReuse::Refuse;
}
// Whether `path` holds a run (a run.json).
bool holds_run(const std::filesystem::path& path);

// Throws one line with the way out when `path` holds a run and `reuse` is Refuse, or when
// `reuse` is Replace and removing the run's directory would remove more than a run: the working
// directory, or anything no telar run writes (a user's notes.txt); commands call it before any
// work. `overwrite_flag` is the option that replaces it.
void check_run_path(const std::filesystem::path& path, RunReuse reuse,
                    std::string_view overwrite_flag = "--overwrite");

class RunDirectory {
 public:
  // Creates the directory (checks it is writable; throws telar::Error otherwise). A run already
  // there is refused, removed first (Replace) or kept (Continue); see check_run_path.
  explicit RunDirectory(std::filesystem::path path, RunReuse reuse = RunReuse::Refuse);
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path file(const std::string& name) const { return path_ / name; }
  // Writes run.json: {"command":…, "config":…, "telar":…, "machine":…} plus extra fields.
  void write_run_json(const std::string& command, const nlohmann::json& config,
                      const nlohmann::json& extra = nlohmann::json::object()) const;
  void write_json(const std::string& name, const nlohmann::json& value) const;

 private:
  std::filesystem::path path_;
  // Made after the checks. A directory it made and nothing was written to is removed again
  // when the command fails (an exception leaves the scope): bad input found once the run had
  // begun leaves no empty run behind; what a run wrote (a checkpoint to resume from) stays.
  std::optional<OutputDirectory> dir_;
};

// Tidy metrics: one row per observation (epoch, batch, phase, metric, value).
class MetricsTable {
 public:
  void add(std::int64_t epoch, std::int64_t batch, const std::string& phase,
           const std::string& metric, double value);
  std::string csv() const;
  void write(const std::filesystem::path& path) const;  // atomic
  // Reads a file written by write() (a resumed run continues its metrics); throws on a
  // malformed file.
  static MetricsTable read(const std::filesystem::path& path);
  struct Row {
    std::int64_t epoch, batch;
    std::string phase, metric;
    double value;
  };
  const std::vector<Row>& rows() const { return rows_; }

 private:
  std::vector<Row> rows_;
};

// A unique, time-stamped default run directory name under `root`: root/<prefix>-YYYYmmdd-HHMMSS[-n]
std::filesystem::path default_run_path(const std::string& prefix,
                                       const std::filesystem::path& root = "runs");

}  // namespace telar::report
