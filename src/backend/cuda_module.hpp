#pragma once
// The CUDA backend's module (libtelar_cuda.so, built from backend/cuda/ where CMake finds nvcc,
// cuBLAS and cuDNN): what backend.cpp calls once the module is loaded (core/module.hpp).
// Its functions are backend/cuda/cuda_backend.hpp's; they throw telar::Error as documented there.
#include <memory>
#include <string_view>

#include "backend/backend.hpp"

namespace telar::backend {

struct CudaModuleTable {
  int (*usable_device)(const BackendSpec& spec, std::string_view instead);
  std::unique_ptr<Executable> (*compile)(const BackendSpec& spec, const graph::Graph& graph,
                                         graph::ParameterSet& params,
                                         const CompileOptions& options);
};

}  // namespace telar::backend
