#pragma once
// Factories of the oneDNN kernels, one file each (dnnl_<op>.cpp).
#include "backend/cpu/dnnl_kernel.hpp"

namespace telar::backend::cpu {

std::unique_ptr<Kernel> make_dnnl_linear(KernelIO io, LayoutConverter& converter);
std::unique_ptr<Kernel> make_dnnl_conv(KernelIO io, LayoutConverter& converter);
std::unique_ptr<Kernel> make_dnnl_pool(KernelIO io, LayoutConverter& converter);
std::unique_ptr<Kernel> make_dnnl_batchnorm(KernelIO io, LayoutConverter& converter);
std::unique_ptr<Kernel> make_dnnl_eltwise(KernelIO io, LayoutConverter& converter);
std::unique_ptr<Kernel> make_dnnl_softmax(KernelIO io, LayoutConverter& converter);
std::unique_ptr<Kernel> make_dnnl_add(KernelIO io, LayoutConverter& converter);
// Not oneDNN, but native fast kernels chosen the same way (nullptr where they do not apply).
std::unique_ptr<Kernel> make_fast_embedding_bag(KernelIO io);

// Right padding that makes oneDNN's output size equal PyTorch's floor-mode size.
dnnl::memory::dim padding_right(dnnl::memory::dim in, dnnl::memory::dim out,
                                dnnl::memory::dim kernel, dnnl::memory::dim stride,
                                dnnl::memory::dim pad_left, dnnl::memory::dim dilation = 1);

}  // namespace telar::backend::cpu
