#include "dist/energy/nvml.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include "core/error.hpp"

namespace telar::energy {

namespace {

// The few NVML entry points used, declared here (their C ABI is stable; NVML's header is not
// needed to build).
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using CountFn = nvmlReturn_t (*)(unsigned int*);
using HandleFn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using PowerFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);  // milliwatts
using NameFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);

class NvmlMeter final : public EnergyMeter {
 public:
  NvmlMeter(void* lib, ShutdownFn shutdown, PowerFn power, std::vector<nvmlDevice_t> devices,
            std::vector<Domain> domains)
      : lib_(lib), shutdown_(shutdown), power_(power), devices_(std::move(devices)),
        domains_(std::move(domains)) {}
  ~NvmlMeter() override {
    shutdown_();
    dlclose(lib_);
  }
  std::string name() const override { return "nvml"; }
  Reading reading() const override { return Reading::Power; }
  const std::vector<Domain>& domains() const override { return domains_; }
  void read(std::vector<double>& values) override {
    values.resize(devices_.size());
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      unsigned int mw = 0;
      if (power_(devices_[i], &mw) != kNvmlSuccess)
        fail("energy: NVML cannot read the power of GPU {} any more", i);
      values[i] = static_cast<double>(mw) * 1e-3;
    }
  }

 private:
  void* lib_;
  ShutdownFn shutdown_;
  PowerFn power_;
  std::vector<nvmlDevice_t> devices_;
  std::vector<Domain> domains_;
};

}  // namespace

std::unique_ptr<EnergyMeter> open_nvml(std::string& why) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    why = "no NVIDIA driver library (libnvidia-ml.so.1)";
    return nullptr;
  }
  auto sym = [&](const char* name) { return dlsym(lib, name); };
  auto init = reinterpret_cast<InitFn>(sym("nvmlInit_v2"));
  auto shutdown = reinterpret_cast<ShutdownFn>(sym("nvmlShutdown"));
  auto count = reinterpret_cast<CountFn>(sym("nvmlDeviceGetCount_v2"));
  auto handle = reinterpret_cast<HandleFn>(sym("nvmlDeviceGetHandleByIndex_v2"));
  auto power = reinterpret_cast<PowerFn>(sym("nvmlDeviceGetPowerUsage"));
  auto name = reinterpret_cast<NameFn>(sym("nvmlDeviceGetName"));
  if (!init || !shutdown || !count || !handle || !power || !name) {
    why = "libnvidia-ml.so.1 lacks the NVML functions telar uses (a very old driver?)";
    dlclose(lib);
    return nullptr;
  }
  if (init() != kNvmlSuccess) {
    why = "NVML did not initialise (is the NVIDIA driver loaded?)";
    dlclose(lib);
    return nullptr;
  }
  unsigned int n = 0;
  std::vector<nvmlDevice_t> devices;
  std::vector<Domain> domains;
  if (count(&n) == kNvmlSuccess)
    for (unsigned int i = 0; i < n; ++i) {
      nvmlDevice_t d = nullptr;
      unsigned int mw = 0;
      if (handle(i, &d) != kNvmlSuccess || power(d, &mw) != kNvmlSuccess) continue;
      char text[96] = {};
      name(d, text, sizeof(text));
      devices.push_back(d);
      domains.push_back({fmt::format("gpu-{}", i), DeviceKind::Gpu, static_cast<int>(i), text});
    }
  if (devices.empty()) {
    why = "NVML sees no GPU whose power it can read";
    shutdown();
    dlclose(lib);
    return nullptr;
  }
  return std::make_unique<NvmlMeter>(lib, shutdown, power, std::move(devices), std::move(domains));
}

}  // namespace telar::energy
