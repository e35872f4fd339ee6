#include "cli/quantized_model.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/files.hpp"

namespace telar::cli {

namespace fs = std::filesystem;

namespace {
constexpr const char* kFormat = "telar-quantization";
constexpr int kVersion = 1;
}  // namespace

nlohmann::json quantization_json(const backend::QuantizationTable& table,
                                 const nlohmann::json& provenance) {
  nlohmann::json j = provenance;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["method"] = std::string(backend::calibration_method_name(table.method));
  j["percentile"] = table.percentile;
  nlohmann::json ranges = nlohmann::json::object();
  for (const auto& [name, r] : table.ranges) ranges[name] = {r.min, r.max};
  j["ranges"] = ranges;
  j["excluded"] = table.excluded;
  return j;
}

std::shared_ptr<const backend::QuantizationTable> read_quantization(
    const fs::path& checkpoint_file) {
  const fs::path file = checkpoint_file.parent_path() / kQuantizationFileName;
  if (!fs::exists(file)) return nullptr;
  const auto j = nlohmann::json::parse(read_file(file), nullptr, false);
  require(j.is_object() && j.value("format", "") == kFormat && j.contains("ranges") &&
              j["ranges"].is_object(),
          "{} is not a quantization table written by telar quantize; quantize the model again",
          file.string());
  require(j.value("version", 0) == kVersion,
          "{} has version {} of the quantization table; this telar reads version {}: quantize "
          "the model again",
          file.string(), j.value("version", 0), kVersion);
  auto table = std::make_shared<backend::QuantizationTable>();
  table->method = backend::parse_calibration_method(j.value("method", "minmax"), file.string());
  table->percentile = j.value("percentile", 99.99);
  for (const auto& [name, range] : j["ranges"].items()) {
    require(range.is_array() && range.size() == 2 && range[0].is_number() && range[1].is_number() &&
                range[0].get<float>() <= range[1].get<float>(),
            "{}: the range of '{}' is not [min, max]; quantize the model again", file.string(),
            name);
    table->ranges[name] = {range[0].get<float>(), range[1].get<float>()};
  }
  if (j.contains("excluded")) {
    require(j["excluded"].is_array() &&
                std::all_of(j["excluded"].begin(), j["excluded"].end(),
                            [](const nlohmann::json& n) { return n.is_string(); }),
            "{}: 'excluded' is not a list of node names; quantize the model again", file.string());
    for (const auto& n : j["excluded"]) table->excluded.insert(n.get<std::string>());
  }
  return table;
}

void refuse_quantized(const fs::path& dir, const std::string& why) {
  const fs::path folder = fs::is_directory(dir) ? dir : dir.parent_path();
  if (!fs::exists(folder / kQuantizationFileName)) return;
  fail(
      "{} is a quantized model (telar quantize), for inference only, and {}; give the run it "
      "was quantized from",
      dir.string(), why);
}

}  // namespace telar::cli
