// Hybrid simulation targets (.toml: accelerators per layer class, tile files per layer).
#include "backend/sim/target.hpp"
#include "fuzz/harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return telar::fuzz::refused_only_by_errors(
      [&] { telar::backend::sim::load_target(telar::fuzz::as_file(data, size, ".toml")); });
}
