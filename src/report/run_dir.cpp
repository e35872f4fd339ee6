#include "report/run_dir.hpp"

#include <dnnl.h>
#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/parse.hpp"
#include "core/threads.hpp"
#include "core/version.hpp"

namespace telar::report {

namespace fs = std::filesystem;

nlohmann::json machine_info() {
  nlohmann::json m;
  utsname u{};
  if (uname(&u) == 0) {
    m["hostname"] = u.nodename;
    m["kernel"] = std::string(u.sysname) + " " + u.release;
    m["arch"] = u.machine;
  }
  m["hardware_threads"] = hardware_threads();
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      m["cpu"] = line.substr(line.find(':') + 2);
      break;
    }
  return m;
}

bool holds_run(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path / "run.json", ec);
}

namespace {

// Whether `entry`, found in a run directory, is of the kinds telar's runs write there: their
// files (run.json, report.html, CSV tables, checkpoints, ONNX models, latency tables, NumPy
// arrays, a write's temporary) and their sub-directories (a demo's runs, profiles, simulator
// outputs). Anything else is the user's, which --overwrite must not remove.
bool written_by_runs(const fs::directory_entry& entry) {
  static const std::set<std::string> kFiles = {".json", ".html", ".csv", ".telar",
                                               ".onnx", ".lut",  ".npy", ".tmp"};
  static const std::set<std::string> kDirectories = {
      "adapt",    "bench",  "check", "configs", "emb",   "profile", "sim",
      "simulate", "stonne", "sweep", "tiles",   "train", "workers"};
  std::error_code ec;
  const std::string name = entry.path().filename().string();
  if (entry.is_directory(ec)) return kDirectories.count(name) > 0 || holds_run(entry.path());
  return kFiles.count(entry.path().extension().string()) > 0;
}

// Replacing `path` removes it whole: refused (one line, nothing removed) where it is the working
// directory or holds it, or where it holds something no run writes.
void check_replaceable(const fs::path& path) {
  std::error_code ec;
  fs::path target = fs::weakly_canonical(path, ec);
  if (!target.has_filename()) target = target.parent_path();  // "runs/x/"
  const fs::path here = fs::current_path(ec);
  const auto [end, rest] = std::mismatch(target.begin(), target.end(), here.begin(), here.end());
  require(end != target.end() || target.empty(),
          "--overwrite would remove '{}', which holds the working directory; give --out a new "
          "directory",
          path.string());
  for (const auto& entry : fs::directory_iterator(path, ec))
    require(written_by_runs(entry),
            "'{}' holds {}, which no telar run writes: --overwrite removes the whole directory, "
            "so move that away first or give --out a new directory",
            path.string(), entry.path().filename().string());
}

}  // namespace

void check_run_path(const fs::path& path, RunReuse reuse, std::string_view overwrite_flag) {
  if (reuse == RunReuse::Replace && holds_run(path)) check_replaceable(path);
  if (reuse != RunReuse::Refuse || !holds_run(path)) return;
  std::string what = "a run";
  try {
    const nlohmann::json j = nlohmann::json::parse(read_file(path / "run.json"));
    if (j.contains("command") && j["command"].is_string())
      what = fmt::format("a run of '{}'", j["command"].get<std::string>());
    if (j.contains("status") && j["status"].is_string())
      what += fmt::format(" ({})", j["status"].get<std::string>());
  } catch (const std::exception&) {
    // An unreadable run.json still marks a run: refuse all the same.
  }
  fail("'{}' holds {} already; give --out a new directory, or add {} to replace that run",
       path.string(), what, overwrite_flag);
}

RunDirectory::RunDirectory(fs::path path, RunReuse reuse) : path_(std::move(path)) {
  check_run_path(path_, reuse);
  if (reuse == RunReuse::Replace && holds_run(path_)) {
    std::error_code ec;
    fs::remove_all(path_, ec);
    if (ec)
      fail("cannot remove the run in '{}' to replace it: {}", path_.string(), ec.message());
  }
  dir_.emplace(path_, true);
  remove_stale_temporaries(path_);  // a checkpoint or run.json write killed mid-way
}

void RunDirectory::write_run_json(const std::string& command, const nlohmann::json& config,
                                  const nlohmann::json& extra) const {
  nlohmann::json j = extra;
  j["command"] = command;
  j["config"] = config;
  const dnnl_version_t* dnnl = dnnl_version();
  j["telar"] = {{"version", version()},
                {"build", build_summary()},
                {"onednn", fmt::format("{}.{}.{} ({})", dnnl->major, dnnl->minor, dnnl->patch,
                                       dnnl->hash)}};
  j["machine"] = machine_info();
  j["created_unix"] = static_cast<std::int64_t>(std::time(nullptr));
  write_json("run.json", j);
}

void RunDirectory::write_json(const std::string& name, const nlohmann::json& value) const {
  write_file_atomic(file(name), value.dump(2) + "\n");
}

void MetricsTable::add(std::int64_t epoch, std::int64_t batch, const std::string& phase,
                       const std::string& metric, double value) {
  rows_.push_back({epoch, batch, phase, metric, value});
}

std::string MetricsTable::csv() const {
  std::string out = "epoch,batch,phase,metric,value\n";
  for (const auto& r : rows_)
    out += fmt::format("{},{},{},{},{:.9g}\n", r.epoch, r.batch, r.phase, r.metric, r.value);
  return out;
}

void MetricsTable::write(const fs::path& path) const { write_file_atomic(path, csv()); }

MetricsTable MetricsTable::read(const fs::path& path) {
  MetricsTable t;
  std::istringstream in(read_file(path));
  std::string line;
  std::getline(in, line);
  if (line != "epoch,batch,phase,metric,value")
    fail("{} is not a telar metrics file (its header is '{}')", path.string(), line);
  for (int n = 2; std::getline(in, line); ++n) {
    auto f = split(line, ',');
    if (f.size() != 5) fail("{}:{}: expected 5 fields, got {}", path.string(), n, f.size());
    t.add(parse_int(f[0], "epoch"), parse_int(f[1], "batch"), f[2], f[3],
          parse_double(f[4], "value"));
  }
  return t;
}

fs::path default_run_path(const std::string& prefix, const fs::path& root) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  fs::path base = root / fmt::format("{}-{}", prefix, stamp);
  fs::path p = base;
  for (int n = 2; fs::exists(p); ++n) p = fs::path(base.string() + "-" + std::to_string(n));
  return p;
}

}  // namespace telar::report
