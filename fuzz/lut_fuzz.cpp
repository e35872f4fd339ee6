// Latency look-up tables (`telar lut build`'s files, read by `adapt --lut` and `lut check`).
#include "adapt/lut.hpp"
#include "fuzz/harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return telar::fuzz::refused_only_by_errors(
      [&] { telar::adapt::LatencyTable::read(telar::fuzz::as_file(data, size, ".lut")); });
}
