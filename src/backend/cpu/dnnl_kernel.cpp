#include "backend/cpu/dnnl_kernel.hpp"

namespace telar::backend::cpu {

bool parameters_changed(const KernelIO& io, std::uint64_t& seen) {
  if (!io.params_version) return true;
  if (*io.params_version == seen) return false;
  seen = *io.params_version;
  return true;
}

dnnl::memory::dim padding_right(dnnl::memory::dim in, dnnl::memory::dim out,
                                dnnl::memory::dim kernel, dnnl::memory::dim stride,
                                dnnl::memory::dim pad_left, dnnl::memory::dim dilation) {
  return (out - 1) * stride + (kernel - 1) * dilation + 1 - in - pad_left;
}

}  // namespace telar::backend::cpu
