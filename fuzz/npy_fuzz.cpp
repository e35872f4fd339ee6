// NumPy .npy arrays (`telar infer --inputs`).
#include "core/npy.hpp"
#include "fuzz/harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return telar::fuzz::refused_only_by_errors(
      [&] { telar::read_npy(telar::fuzz::as_file(data, size, ".npy")); });
}
