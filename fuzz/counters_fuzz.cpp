// STONNE .counters files (what `telar energy` reads).
#include "fuzz/harness.hpp"
#include "sim/stats.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return telar::fuzz::refused_only_by_errors(
      [&] { telar::sim::parse_counters(telar::fuzz::text(data, size), "fuzz.counters"); });
}
