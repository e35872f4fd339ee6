// The entry points of libtelar_cuda.so (core/module.hpp), loaded by backend.cpp on first use.
#include "backend/cuda/cuda_backend.hpp"
#include "backend/cuda_module.hpp"
#include "core/module_entry.hpp"

TELAR_MODULE_ENTRY(telar::backend::CudaModuleTable{&telar::backend::cuda::usable_device,
                                                   &telar::backend::cuda::compile})
