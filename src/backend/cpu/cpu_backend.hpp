#pragma once
#include <memory>
#include <string>

#include "backend/backend.hpp"

namespace telar::backend::cpu {

// "cpu" (oneDNN where it has a primitive, reference kernels elsewhere), "cpu:ref" (reference
// kernels only), options threads=N, split=, adapt=, winograd= and reuse=on|off.
std::unique_ptr<Executable> compile(const BackendSpec& spec, const graph::Graph& graph,
                                    graph::ParameterSet& params, const CompileOptions& options);

// The instruction set oneDNN dispatches its kernels to on this machine, e.g. "avx512_core_bf16".
std::string dispatched_isa();
// Whether oneDNN has bf16 kernels here (avx512_core_bf16 or AMX).
bool has_bf16();
// Whether oneDNN has int8 kernels with VNNI here (avx512_core_vnni and up, or avx2_vnni).
bool has_int8();

}  // namespace telar::backend::cpu
