// IDX files (MNIST's format): read as images and as labels.
#include "fuzz/harness.hpp"
#include "train/data/idx.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = telar::fuzz::as_file(data, size, ".idx");
  telar::fuzz::refused_only_by_errors([&] { telar::train::read_idx_images(file); });
  telar::fuzz::refused_only_by_errors([&] { telar::train::read_idx_labels(file); });
  return 0;
}
