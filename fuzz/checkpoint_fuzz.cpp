// telar checkpoints (checkpoint.telar).
#include "fuzz/harness.hpp"
#include "train/checkpoint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return telar::fuzz::refused_only_by_errors(
      [&] { telar::train::read_checkpoint(telar::fuzz::as_file(data, size, ".telar")); });
}
