#include "backend/backend.hpp"

#include <fmt/format.h>

#include "backend/cpu/cpu_backend.hpp"
#include "backend/cuda_module.hpp"
#include "backend/sim/sim_backend.hpp"
#include "core/error.hpp"
#include "core/module.hpp"
#include "core/parse.hpp"

namespace telar::backend {

namespace {

// The CUDA backend lives in a module (libtelar_cuda.so) loaded on the first cuda target, so
// that runs without one never map the CUDA libraries.
const CudaModuleTable& cuda_module(const BackendSpec& spec, std::string_view instead) {
  if (!built_in("cuda"))
    fail(
        "backend '{}': the CUDA backend is not built into this telar (nvcc, cuBLAS or cuDNN was "
        "missing at build time): use {}",
        spec.text, instead);
  try {
    return modules::load_table<CudaModuleTable>("cuda");
  } catch (const Error& e) {
    fail("backend '{}': {}; or use {}", spec.text, e.what(), instead);
  }
}

}  // namespace

BackendSpec parse_backend_spec(const std::string& text) {
  BackendSpec spec;
  spec.text = text;
  const auto colon = text.find(':');
  spec.kind = text.substr(0, colon);
  const std::vector<std::string> kinds = {"cpu", "cuda", "sim"};
  if (spec.kind != "cpu" && spec.kind != "cuda" && spec.kind != "sim") {
    const std::string near = closest_match(spec.kind, kinds);
    fail(
        "unknown backend '{}'{}; use cpu, cpu:threads=N, cpu:ref, cuda:N, sim:CONFIG.cfg or "
        "sim:HYBRID.toml",
        text, near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near));
  }
  if (colon == std::string::npos) return spec;
  const std::string rest = text.substr(colon + 1);
  if (spec.kind == "sim") {  // the rest is a path
    spec.target = rest;
    return spec;
  }
  for (const auto& part : split(rest, ':')) {
    if (part.empty()) fail("backend '{}': empty option", text);
    const auto eq = part.find('=');
    if (eq == std::string::npos) {
      if (!spec.target.empty() || !spec.options.empty())
        fail("backend '{}': '{}' must be written key=value", text, part);
      spec.target = part;
    } else {
      spec.options[part.substr(0, eq)] = part.substr(eq + 1);
    }
  }
  return spec;
}

std::string_view precision_name(Precision precision) {
  switch (precision) {
    case Precision::BF16:
      return "bf16";
    case Precision::INT8:
      return "int8";
    default:
      return "fp32";
  }
}

Precision parse_precision(std::string_view text, std::string_view what) {
  if (text == "fp32") return Precision::FP32;
  if (text == "bf16") return Precision::BF16;
  if (text == "int8") return Precision::INT8;
  fail("{} '{}' is not a precision telar runs; give fp32, bf16 or int8", what, text);
}

bool runs_int8(const BackendSpec& spec) {
  return spec.kind == "cpu" && spec.target != "ref" && spec.options.count("ref") == 0;
}

bool built_in(const std::string& kind) {
  if (kind == "cuda") return modules::built("cuda");
  return kind == "cpu" || kind == "sim";
}

void check_usable(const BackendSpec& spec, std::string_view instead) {
  if (spec.kind != "cuda") return;
  cuda_module(spec, instead).usable_device(spec, instead);
}

std::unique_ptr<Executable> compile(const BackendSpec& spec, const graph::Graph& graph,
                                    graph::ParameterSet& params, const CompileOptions& options) {
  if (options.precision != Precision::FP32) {
    require(options.inference, "internal: {} is for models compiled for inference",
            precision_name(options.precision));
    require(spec.kind == "cpu", "--precision {}: the {} backend runs fp32 only here; run {} on cpu",
            precision_name(options.precision), spec.kind, precision_name(options.precision));
  }
  if (spec.kind == "cpu") return cpu::compile(spec, graph, params, options);
  if (spec.kind == "cuda")
    return cuda_module(spec, "--backend cpu").compile(spec, graph, params, options);
  return sim::compile(spec, graph, params, options);
}

}  // namespace telar::backend
