#pragma once
// NVIDIA GPU power through NVML, loaded at run time (dlopen of the driver's libnvidia-ml.so.1)
// so telar builds and runs where there is no NVIDIA driver.
#include <memory>
#include <string>

#include "dist/energy/meter.hpp"

namespace telar::energy {

// The NVML meter (power of every GPU), or null with `why` set (no driver library, no GPU).
std::unique_ptr<EnergyMeter> open_nvml(std::string& why);

}  // namespace telar::energy
