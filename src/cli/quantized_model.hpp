#pragma once
// A quantized model as `telar quantize` writes it: a folder with the trained checkpoint it came
// from (copied) and quantization.json, the calibration table (backend/quantization.hpp) with
// how it was made. `eval`, `bench` and `export` take the folder like a run directory; training
// refuses it.
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "backend/quantization.hpp"

namespace telar::cli {

inline constexpr const char* kQuantizationFileName = "quantization.json";

// {"format": "telar-quantization", "version": 1, "method", "percentile", "ranges": {value:
// [min, max]}, "excluded": [node...]} plus `provenance`'s fields (the checkpoint, data and
// batches it came from).
nlohmann::json quantization_json(const backend::QuantizationTable& table,
                                 const nlohmann::json& provenance);

// The table beside a checkpoint file (in its folder), or nullptr where there is none; throws
// telar::Error for a malformed one.
std::shared_ptr<const backend::QuantizationTable> read_quantization(
    const std::filesystem::path& checkpoint_file);

// Throws telar::Error where `dir` (a run directory or checkpoint file) is a quantized model:
// `why` says why the command refuses it ("telar train --resume trains it").
void refuse_quantized(const std::filesystem::path& dir, const std::string& why);

}  // namespace telar::cli
