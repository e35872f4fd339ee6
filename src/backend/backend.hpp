#pragma once
// Backends are named by strings the user types: "cpu", "cpu:threads=1", "cpu:ref" (reference
// kernels only, the oracle), "cuda:0", "sim:configs/maeri_256mses_128_bw.cfg".
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backend/executable.hpp"
#include "backend/quantization.hpp"

namespace telar::backend {

struct BackendSpec {
  std::string kind;                             // "cpu", "cuda", "sim"
  std::string target;                           // "0" for cuda:0, a path for sim:
  std::map<std::string, std::string> options;   // threads=1, slowdown=4, ref ...
  std::string text;                             // as typed
};

// Parses "kind[:target][:key=value...]"; throws telar::Error for an unknown kind or option.
BackendSpec parse_backend_spec(const std::string& text);

// The arithmetic of a model compiled for inference: fp32; bf16 (convolutions and Linear on
// oneDNN's bf16 primitives: bf16 activations and weights, f32 accumulation and biases; pooling
// and element-wise ops between convolutions in bf16; the rest fp32); or int8 (post-training
// static quantization, backend/quantization.hpp: convolutions and Linear on oneDNN's int8
// primitives, s8 weights with per-output-channel scales, u8/s8 activations with the scales
// calibration measured, requantized inside the primitive; pooling in int8; the rest fp32).
enum class Precision : std::uint8_t { FP32, BF16, INT8 };
std::string_view precision_name(Precision precision);  // "fp32", "bf16", "int8"
// Parses "fp32", "bf16" or "int8"; throws telar::Error naming the choices.
Precision parse_precision(std::string_view text, std::string_view what);
// Whether the backend runs int8 (and bf16): the cpu on oneDNN's primitives, not cpu:ref, a sim
// target or a GPU. A quantized model runs at int8 by default where this holds.
bool runs_int8(const BackendSpec& spec);

struct CompileOptions {
  CompileOptions() = default;
  CompileOptions(std::uint64_t s) : seed(s) {}  // NOLINT: `{seed}` reads as the options
  std::uint64_t seed = 0;   // dropout masks and other random choices
  // Graph inputs (f32, fixed shape) whose gradients backward() also computes, readable through
  // Executable::input_gradient() (e.g. DLRM's embedding outputs, fed by its own table kernels).
  std::vector<graph::ValueId> input_gradients;
  // Set by compile_for_inference (backend/inference.hpp): only evaluation forwards will run, so
  // the cpu backend may choose their threads call by call (cpu/thread_choice.hpp) and let values
  // that do not live at once share memory (cpu/plan.hpp).
  bool inference = false;
  // bf16 needs `inference` and the cpu backend on a CPU with avx512_bf16 (else one error);
  // int8 needs `inference`, the cpu backend on a CPU with VNNI, and `quantization`.
  Precision precision = Precision::FP32;
  // int8: the activation ranges calibration measured on this graph compiled for inference.
  std::shared_ptr<const QuantizationTable> quantization;
};

// Whether this telar was built with the backend kind ("cpu", "cuda", "sim"); a built-in
// backend may still find no device at compile().
bool built_in(const std::string& kind);

// Throws the error compile() would give for a backend that cannot run here (cuda without a
// device or not built), so commands can refuse before they write anything; the message ends
// "use <instead>". Cheap; checks nothing for cpu and sim specs (their errors come from
// compile()).
void check_usable(const BackendSpec& spec, std::string_view instead = "--backend cpu");

// Compiles `graph` for the backend; `params` must outlive the executable.
std::unique_ptr<Executable> compile(const BackendSpec& spec, const graph::Graph& graph,
                                    graph::ParameterSet& params, const CompileOptions& options = {});

}  // namespace telar::backend
