// Matrix Market files (.mtx): the operands of `telar sim`'s sparse operations.
#include "fuzz/harness.hpp"
#include "sim/sparse_workload.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return telar::fuzz::refused_only_by_errors(
      [&] { telar::sim::parse_matrix_market(telar::fuzz::text(data, size), "fuzz.mtx"); });
}
