#pragma once
// A run directory: every command that does work writes one, with run.json (resolved
// configuration, versions, machine), tidy CSV metrics, stats and report.html.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace telar::report {

// Facts about this machine and build, for run.json.
nlohmann::json machine_info();

class RunDirectory {
 public:
  // Creates the directory (checks it is writable; throws telar::Error otherwise).
  explicit RunDirectory(std::filesystem::path path);
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path file(const std::string& name) const { return path_ / name; }
  // Writes run.json: {"command":…, "config":…, "telar":…, "machine":…} plus extra fields.
  void write_run_json(const std::string& command, const nlohmann::json& config,
                      const nlohmann::json& extra = nlohmann::json::object()) const;
  void write_json(const std::string& name, const nlohmann::json& value) const;

 private:
  std::filesystem::path path_;
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
