#include "dist/energy/sampler.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>

#include "core/clock.hpp"
#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/log.hpp"
#include "core/parse.hpp"
#include "dist/energy/nvml.hpp"
#include "dist/energy/rapl.hpp"

namespace telar::energy {

namespace {
constexpr EnumNames<DeviceKind, DeviceKind::Gpu> kDeviceKinds{
    {"cpu", "dram", "core", "uncore", "platform", "gpu"}};
}

std::string_view device_kind_name(DeviceKind kind) {
  return kDeviceKinds(kind);
}

namespace {
DeviceKind kind_from_name(const std::string& s) {
  if (auto kind = kDeviceKinds.find(s)) return *kind;
  fail("energy summary: unknown device kind '{}'", s);
}

bool counts_in_totals(DeviceKind k) { return k == DeviceKind::CpuPackage || k == DeviceKind::Gpu; }
}  // namespace

std::vector<std::unique_ptr<EnergyMeter>> open_meters(const MeterOptions& options,
                                                      std::vector<std::string>& notes) {
  std::vector<std::unique_ptr<EnergyMeter>> meters;
  std::string root = options.powercap_root;
  if (root.empty())
    if (const char* env = std::getenv("TELAR_POWERCAP_ROOT")) root = env;
  if (root.empty()) root = "/sys/class/powercap";
  std::string why_rapl = "RAPL not asked for", why_nvml = "NVML not asked for";
  if (options.rapl) {
    why_rapl.clear();
    if (auto rapl = open_rapl(root, why_rapl)) meters.push_back(std::move(rapl));
  }
  if (options.nvml) {
    why_nvml.clear();
    if (auto nvml = open_nvml(why_nvml)) meters.push_back(std::move(nvml));
  }
  if (meters.empty()) {
    notes.push_back(fmt::format("no meter on this machine ({}; {})", why_rapl, why_nvml));
  } else if (!why_rapl.empty() && why_rapl.find("root only") != std::string::npos) {
    notes.push_back(why_rapl);
  }
  return meters;
}

void select_meters(MeterOptions& options, const std::string& list) {
  require(!trim(list).empty(), "--meters is empty; use rapl, nvml or rapl,nvml");
  options.rapl = options.nvml = false;
  for (const std::string& item : split(list, ',')) {
    const std::string_view name = trim(item);
    if (name == "rapl") {
      options.rapl = true;
    } else if (name == "nvml") {
      options.nvml = true;
    } else {
      fail("--meters {}: unknown meter '{}'; use rapl, nvml or rapl,nvml", list, name);
    }
  }
}

EnergySampler::EnergySampler(std::vector<std::unique_ptr<EnergyMeter>> meters,
                             double interval_seconds, std::string no_meter_note)
    : meters_(std::move(meters)), interval_(interval_seconds), note_(std::move(no_meter_note)) {
  require(interval_seconds > 0, "energy: the sampling interval must be positive, got {} s",
          interval_seconds);
  for (const auto& m : meters_)
    for (const Domain& d : m->domains()) columns_.push_back(d.name);
}

EnergySampler::~EnergySampler() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      running_ = false;
    }
    cv_.notify_all();
    thread_.join();
  }
}

void EnergySampler::record(double t) {
  std::vector<double> now;
  for (const auto& m : meters_) {
    m->read(scratch_);
    for (double v : scratch_) now.push_back(v);
  }
  std::lock_guard lock(mutex_);
  const bool first = times_.empty();
  if (first) {
    first_energy_ = now;
    last_energy_ = now;
    integrated_.assign(now.size(), 0.0);
    times_.push_back(t);
    return;
  }
  const double dt = t - times_.back();
  std::vector<double> w(now.size(), 0.0);
  std::size_t k = 0;
  for (const auto& m : meters_) {
    const bool energy = m->reading() == EnergyMeter::Reading::Energy;
    for (std::size_t i = 0; i < m->domains().size(); ++i, ++k) {
      if (energy) {
        w[k] = dt > 0 ? (now[k] - last_energy_[k]) / dt : 0.0;
        integrated_[k] = now[k] - first_energy_[k];
      } else {
        w[k] = now[k];
        integrated_[k] += now[k] * dt;  // the power read now, over the interval that ends now
      }
    }
  }
  last_energy_ = now;
  times_.push_back(t);
  watts_.push_back(std::move(w));
}

void EnergySampler::start() {
  start_ns_ = now_ns();
  if (meters_.empty()) return;
  record(0.0);
  running_ = true;
  thread_ = std::thread([this] { loop(); });
}

void EnergySampler::loop() {
  std::unique_lock lock(mutex_);
  auto next = std::chrono::steady_clock::now();
  while (running_) {
    next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(interval_));
    if (cv_.wait_until(lock, next, [&] { return !running_; })) break;
    lock.unlock();
    try {
      record(static_cast<double>(now_ns() - start_ns_) * 1e-9);
    } catch (const std::exception& e) {
      log::notice_once("energy-read", fmt::format("{}; the energy figures end here", e.what()));
      lock.lock();
      break;
    }
    lock.lock();
  }
}

EnergySummary EnergySampler::stop() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      running_ = false;
    }
    cv_.notify_all();
    thread_.join();
    try {
      record(static_cast<double>(now_ns() - start_ns_) * 1e-9);
    } catch (const std::exception& e) {
      log::notice_once("energy-read", e.what());
    }
  }
  return summary();
}

EnergySummary EnergySampler::summary() const {
  std::lock_guard lock(mutex_);
  EnergySummary s;
  if (meters_.empty()) {
    s.note = note_.empty() ? "no energy meter" : note_;
    return s;
  }
  s.measured = times_.size() >= 2;
  s.seconds = times_.empty() ? 0.0 : times_.back() - times_.front();
  s.samples = times_.size();
  std::size_t k = 0;
  for (const auto& m : meters_)
    for (const Domain& d : m->domains()) {
      DeviceEnergy e;
      e.domain = d;
      e.meter = m->name();
      e.joules = k < integrated_.size() ? integrated_[k] : 0.0;
      e.mean_watts = s.seconds > 0 ? e.joules / s.seconds : 0.0;
      e.used = d.kind == DeviceKind::CpuPackage || (d.kind == DeviceKind::Gpu && used_gpus_.count(d.index));
      if (counts_in_totals(d.kind)) {
        s.all_joules += e.joules;
        if (e.used) s.used_joules += e.joules;
      }
      if (d.kind == DeviceKind::Dram) s.dram_joules += e.joules;
      s.devices.push_back(std::move(e));
      ++k;
    }
  if (!s.measured) s.note = "the run was shorter than one reading interval";
  return s;
}

void EnergySampler::write_csv(const std::filesystem::path& path) const {
  std::lock_guard lock(mutex_);
  std::string out = "time_s";
  for (const auto& c : columns_) out += "," + c + "_w";
  out += "\n";
  for (std::size_t i = 0; i < watts_.size(); ++i) {
    out += fmt::format("{:.3f}", times_[i + 1]);
    for (double w : watts_[i]) out += fmt::format(",{:.3f}", w);
    out += "\n";
  }
  write_file_atomic(path, out);
}

nlohmann::json EnergySummary::to_json() const {
  nlohmann::json j = {{"measured", measured}};
  if (!note.empty()) j["note"] = note;
  if (devices.empty()) return j;
  nlohmann::json devs = nlohmann::json::array();
  for (const DeviceEnergy& d : devices)
    devs.push_back({{"name", d.domain.name},
                    {"kind", device_kind_name(d.domain.kind)},
                    {"index", d.domain.index},
                    {"detail", d.domain.detail},
                    {"meter", d.meter},
                    {"joules", d.joules},
                    {"mean_watts", d.mean_watts},
                    {"used", d.used}});
  j["devices"] = devs;
  j["seconds"] = seconds;
  j["samples"] = samples;
  j["used_joules"] = used_joules;
  j["all_joules"] = all_joules;
  j["dram_joules"] = dram_joules;
  j["edp_joule_seconds"] = edp();
  j["edp_all_joule_seconds"] = edp_all();
  j["mean_watts_used"] = seconds > 0 ? used_joules / seconds : 0.0;
  return j;
}

EnergySummary EnergySummary::from_json(const nlohmann::json& j) {
  EnergySummary s;
  s.measured = j.value("measured", false);
  s.note = j.value("note", std::string());
  s.seconds = j.value("seconds", 0.0);
  s.samples = j.value("samples", std::size_t{0});
  s.used_joules = j.value("used_joules", 0.0);
  s.all_joules = j.value("all_joules", 0.0);
  s.dram_joules = j.value("dram_joules", 0.0);
  if (j.contains("devices"))
    for (const auto& d : j["devices"]) {
      DeviceEnergy e;
      e.domain.name = d.value("name", std::string());
      e.domain.kind = kind_from_name(d.value("kind", std::string("cpu")));
      e.domain.index = d.value("index", 0);
      e.domain.detail = d.value("detail", std::string());
      e.meter = d.value("meter", std::string());
      e.joules = d.value("joules", 0.0);
      e.mean_watts = d.value("mean_watts", 0.0);
      e.used = d.value("used", false);
      s.devices.push_back(std::move(e));
    }
  return s;
}

std::string EnergySummary::format() const {
  if (!measured) return fmt::format("energy: not measured: {}\n", note);
  std::string out = fmt::format("energy over {:.1f} s ({} readings):\n", seconds, samples);
  for (const DeviceEnergy& d : devices)
    out += fmt::format("  {:<12} {:>12.1f} J {:>9.2f} W{}{}\n", d.domain.name, d.joules, d.mean_watts,
                       d.domain.detail.empty() ? "" : "  " + d.domain.detail,
                       counts_in_totals(d.domain.kind) && !d.used ? "  (idle)" : "");
  out += fmt::format("  total {:.1f} J used ({:.1f} J with idle devices; DRAM {:.1f} J not counted), "
                     "mean {:.2f} W, EDP {:.4g} J s\n",
                     used_joules, all_joules, dram_joules, seconds > 0 ? used_joules / seconds : 0.0,
                     edp());
  return out;
}

std::unique_ptr<EnergySampler> make_sampler(double interval_seconds, const MeterOptions& options) {
  std::vector<std::string> notes;
  auto meters = open_meters(options, notes);
  for (const std::string& n : notes)
    log::notice_once("energy-meters", fmt::format("energy: {}{}", n,
                                                  meters.empty() ? "; energy is not measured" : ""));
  return std::make_unique<EnergySampler>(std::move(meters), interval_seconds,
                                         notes.empty() ? "" : notes.front());
}

}  // namespace telar::energy
