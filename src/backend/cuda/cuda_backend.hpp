#pragma once
// The CUDA backend: "cuda" or "cuda:N" (device N, default 0). Built when CMake finds nvcc,
// cuBLAS and cuDNN (TELAR_HAVE_CUDA), as the module libtelar_cuda.so (module.cpp); backend.cpp
// loads it on the first cuda target and calls these through backend/cuda_module.hpp.
#include <memory>
#include <string_view>

#include "backend/backend.hpp"

namespace telar::backend::cuda {

// The device a spec names, checked: options, device number, a usable driver and device.
// Throws telar::Error otherwise (the same messages as compile()).
// A missing device is reported as "...: use <instead>".
int usable_device(const BackendSpec& spec, std::string_view instead = "--backend cpu");

// Throws telar::Error for a bad spec, and when no CUDA device is usable (no driver, no GPU):
// "no CUDA device is usable here (<runtime's reason>): use --backend cpu".
std::unique_ptr<Executable> compile(const BackendSpec& spec, const graph::Graph& graph,
                                    graph::ParameterSet& params, const CompileOptions& options);

}  // namespace telar::backend::cuda
