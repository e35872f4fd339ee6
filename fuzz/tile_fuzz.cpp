// STONNE tile files, read for each kind of operation (a tile's keys depend on it).
#include "fuzz/harness.hpp"
#include "sim/workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using telar::sim::OpKind;
  for (OpKind kind : {OpKind::Conv, OpKind::Fc, OpKind::DenseGemm})
    telar::fuzz::refused_only_by_errors(
        [&] { telar::sim::parse_tile(telar::fuzz::text(data, size), "fuzz.tile", kind); });
  return 0;
}
