#pragma once
// Intel RAPL through the Linux powercap tree: ROOT/intel-rapl:N is package N (file `name`
// "package-N"), ROOT/intel-rapl:N:M its sub-domains ("dram", "core", "uncore"); each has
// `energy_uj` (a counter in microjoules that wraps at `max_energy_range_uj`). The root is a
// parameter so tests can point it at a fixture tree of the same layout.
#include <filesystem>
#include <memory>
#include <string>

#include "dist/energy/meter.hpp"

namespace telar::energy {

// The RAPL meter of `root`, or null (with `why` set) when there is no readable RAPL domain.
std::unique_ptr<EnergyMeter> open_rapl(const std::filesystem::path& root, std::string& why);

}  // namespace telar::energy
