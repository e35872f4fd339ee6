// Energy tables (configs/energy_model.txt's format).
#include "fuzz/harness.hpp"
#include "sim/energy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return telar::fuzz::refused_only_by_errors(
      [&] { telar::sim::parse_energy_table(telar::fuzz::text(data, size), "fuzz.txt"); });
}
