// STONNE hardware configuration files (.cfg), read and validated as `telar sim --config` does.
#include "fuzz/harness.hpp"
#include "sim/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return telar::fuzz::refused_only_by_errors([&] {
    const telar::sim::HardwareConfig hw =
        telar::sim::parse_config(telar::fuzz::text(data, size), "fuzz.cfg");
    telar::sim::validate(hw);
  });
}
