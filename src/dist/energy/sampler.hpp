#pragma once
// The sauna replacement: a thread reads every meter at a fixed interval (default 500 ms, the
// thesis' tool's) and integrates energy per device over the run. Counter meters (RAPL) give
// exact energy between the first and last reading and the power of each interval; power
// meters (NVML) give energy as the sum of power x interval, as the thesis computed it.
//
//   EnergySampler sampler(open_meters(...), 0.5);
//   sampler.start(); ... work ... EnergySummary s = sampler.stop();
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "dist/energy/meter.hpp"

namespace telar::energy {

struct DeviceEnergy {
  Domain domain;
  std::string meter;
  double joules = 0.0;
  double mean_watts = 0.0;
  bool used = false;  // the run used this device (see EnergySampler::set_used)
};

struct EnergySummary {
  bool measured = false;  // false: no meter; everything else is empty
  std::string note;       // why not measured
  double seconds = 0.0;   // from the first to the last reading
  std::size_t samples = 0;
  std::vector<DeviceEnergy> devices;
  // Totals count CPU packages and GPUs; DRAM (and the core/uncore parts of a package, which
  // the package already contains) are reported per device only, as the thesis did.
  double used_joules = 0.0;
  double all_joules = 0.0;
  double dram_joules = 0.0;
  double edp() const { return used_joules * seconds; }       // J s
  double edp_all() const { return all_joules * seconds; }    // idle devices included

  nlohmann::json to_json() const;
  static EnergySummary from_json(const nlohmann::json& j);
  // A few lines for people: energy and mean power per device, totals, EDP.
  std::string format() const;
};

class EnergySampler {
 public:
  EnergySampler(std::vector<std::unique_ptr<EnergyMeter>> meters, double interval_seconds,
                std::string no_meter_note = "");
  ~EnergySampler();
  EnergySampler(const EnergySampler&) = delete;
  EnergySampler& operator=(const EnergySampler&) = delete;

  bool has_meters() const { return !meters_.empty(); }
  // Which devices the run uses: CPU packages always count as used (they drive any device);
  // GPUs only those listed. Unused devices are still measured (the "with idle" totals).
  void set_used_gpus(std::set<int> gpus) { used_gpus_ = std::move(gpus); }

  // Takes the first reading and starts the sampling thread.
  void start();
  // Takes the last reading, stops the thread and summarises.
  EnergySummary stop();

  // Without a thread (tests, or callers with their own clock): one reading at time `t`
  // seconds (increasing), then summary() over the readings so far.
  void record(double t);
  EnergySummary summary() const;

  // Samples as CSV: time_s, then one column of watts per domain (power over the interval
  // before the reading), one row per reading after the first.
  void write_csv(const std::filesystem::path& path) const;

 private:
  void loop();

  std::vector<std::unique_ptr<EnergyMeter>> meters_;
  double interval_;
  std::string note_;
  std::set<int> used_gpus_;
  std::vector<std::string> columns_;
  std::vector<double> times_;
  std::vector<std::vector<double>> watts_;  // per reading after the first, per domain
  std::vector<double> first_energy_, last_energy_, integrated_;  // per domain
  std::vector<double> scratch_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool running_ = false;
  std::thread thread_;
  std::int64_t start_ns_ = 0;
};

// The meters of this machine and a sampler over them; says once (log::notice_once) when
// there is none or one is unusable. Never throws for a missing meter.
std::unique_ptr<EnergySampler> make_sampler(double interval_seconds, const MeterOptions& options = {});

}  // namespace telar::energy
