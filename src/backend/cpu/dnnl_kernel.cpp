#include "backend/cpu/dnnl_kernel.hpp"

#include "core/error.hpp"

namespace telar::backend::cpu {

void DnnlForwardOnlyKernel::refuse_training() const {
  fail("internal: node '{}' runs on a forward-only kernel (an inference plan's)", node().name);
}

bool parameters_changed(const KernelIO& io, std::uint64_t& seen) {
  if (!io.params_version) return true;
  if (*io.params_version == seen) return false;
  seen = *io.params_version;
  return true;
}

void quantize_into(dnnl::memory plain, dnnl::memory& to, int mask,
                   const std::vector<float>& scales) {
  std::vector<float> inverse(scales.size());
  for (std::size_t c = 0; c < scales.size(); ++c) inverse[c] = 1.0f / scales[c];
  dnnl::primitive_attr attr;
  attr.set_output_scales(mask, inverse);
  dnnl::reorder(plain, to, attr).execute(cpu_stream(), plain, to);
}

std::vector<float> scaled(const std::vector<float>& scales, float factor) {
  std::vector<float> out(scales.size());
  for (std::size_t c = 0; c < scales.size(); ++c) out[c] = scales[c] * factor;
  return out;
}

Tensor divided(const Tensor& values, const std::vector<float>& by) {
  Tensor out(values.shape());
  for (std::int64_t c = 0; c < values.numel(); ++c)
    out.f32()[c] = values.f32()[c] / by[static_cast<std::size_t>(c)];
  return out;
}

dnnl::memory::dim padding_right(dnnl::memory::dim in, dnnl::memory::dim out,
                                dnnl::memory::dim kernel, dnnl::memory::dim stride,
                                dnnl::memory::dim pad_left, dnnl::memory::dim dilation) {
  return (out - 1) * stride + (kernel - 1) * dilation + 1 - in - pad_left;
}

}  // namespace telar::backend::cpu
