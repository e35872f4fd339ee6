#pragma once
// Energy meters: where the watts come from. A meter reads a set of domains (a CPU package, its
// DRAM, a GPU) either as cumulative energy counters (RAPL) or as instantaneous power (NVML);
// the sampler (sampler.hpp) turns both into energy per device over a run.
#include <memory>
#include <string>
#include <vector>

namespace telar::energy {

enum class DeviceKind { CpuPackage, Dram, CpuCore, Uncore, Platform, Gpu };
std::string_view device_kind_name(DeviceKind kind);  // "cpu", "dram", "core", "uncore", "platform", "gpu"

struct Domain {
  std::string name;  // "package-0", "dram-0", "gpu-0"
  DeviceKind kind;
  int index = 0;     // socket or GPU index
  std::string detail;  // e.g. the GPU's model name
};

class EnergyMeter {
 public:
  virtual ~EnergyMeter() = default;
  enum class Reading { Energy, Power };
  virtual std::string name() const = 0;  // "rapl", "nvml"
  virtual Reading reading() const = 0;
  virtual const std::vector<Domain>& domains() const = 0;
  // One value per domain: cumulative joules since the meter was opened (Reading::Energy;
  // counter wrap-around already accounted for) or watts now (Reading::Power). Throws
  // telar::Error if a counter cannot be read any more.
  virtual void read(std::vector<double>& values) = 0;
};

struct MeterOptions {
  std::string powercap_root;  // "" : $TELAR_POWERCAP_ROOT, else /sys/class/powercap
  bool rapl = true;           // look for the RAPL powercap tree
  bool nvml = true;           // look for NVIDIA's driver library
};

// --meters: a comma-separated subset of "rapl,nvml" switches the others off in `options`.
// Throws telar::Error (one line) for an empty list or an unknown meter.
void select_meters(MeterOptions& options, const std::string& list);

// Every meter this machine has (possibly none). `notes` receives one line per meter that
// exists but cannot be used, or, when there is none, why (for the user, said once).
std::vector<std::unique_ptr<EnergyMeter>> open_meters(const MeterOptions& options,
                                                      std::vector<std::string>& notes);

}  // namespace telar::energy
