// papi_presets.hpp's functions. lookup() and list() are forwarded to libtelar_papi.so
// (papi_module.cpp), loaded on the first call, so that commands that name no presets never map
// PAPI. Without the module (not built, or it does not load: said once) the presets with an
// exact perf generic equivalent are counted as that event.
#include "prof/papi_presets.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "core/module.hpp"
#include "core/parse.hpp"
#include "prof/counter_modules.hpp"

namespace telar::prof::papi {

namespace {

// Presets whose meaning is exactly one perf generic event.
constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kGenericEquivalents = {{
    {"PAPI_TOT_INS", "instructions"},
    {"PAPI_TOT_CYC", "cycles"},
    {"PAPI_REF_CYC", "ref-cycles"},
    {"PAPI_BR_INS", "branch-instructions"},
    {"PAPI_BR_MSP", "branch-misses"},
    {"PAPI_L1_ICM", "L1-icache-load-misses"},
    {"PAPI_L1_LDM", "L1-dcache-load-misses"},
    {"PAPI_TLB_DM", "dTLB-load-misses"},
    {"PAPI_TLB_IM", "iTLB-load-misses"},
}};

const PapiModuleTable* papi() {
  static const PapiModuleTable* table = modules::load_table_if_available<PapiModuleTable>(
      "papi", "PAPI presets are counted only where a perf event means the same");
  return table;
}

// Without PAPI: a preset with an exact generic equivalent, counted as that event.
std::optional<Preset> generic_preset(std::string_view name) {
  const auto generic = generic_equivalent(name);
  if (!generic) return std::nullopt;
  Preset p;
  p.symbol = to_upper(name);
  p.description =
      fmt::format("counted as the perf event {} (telar was built without PAPI)", *generic);
  p.natives.push_back(*generic);
  p.signs.push_back(+1);
  return p;
}

}  // namespace

bool built_with_papi() {
  return modules::built("papi");
}

bool looks_like_preset(std::string_view name) {
  return name.size() > 5 && to_upper(name.substr(0, 5)) == "PAPI_";
}

std::optional<std::string> generic_equivalent(std::string_view preset) {
  const std::string u = to_upper(preset);
  for (const auto& [symbol, generic] : kGenericEquivalents)
    if (u == symbol) return std::string(generic);
  return std::nullopt;
}

std::optional<Preset> lookup(std::string_view name) {
  return papi() ? papi()->lookup(name) : generic_preset(name);
}

std::vector<Preset> list() {
  if (papi()) return papi()->list();
  std::vector<Preset> out;
  for (const auto& [symbol, generic] : kGenericEquivalents) out.push_back(*generic_preset(symbol));
  return out;
}

}  // namespace telar::prof::papi
