// ONNX models (`--model FILE.onnx`): parsed, checked and turned into telar's graph.
#include "fuzz/harness.hpp"
#include "onnx/import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return telar::fuzz::refused_only_by_errors(
      [&] { telar::onnx::import_model(telar::fuzz::as_file(data, size, ".onnx")); });
}
