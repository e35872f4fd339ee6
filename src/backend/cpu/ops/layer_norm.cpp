// LayerNorm on the reference kernel (plain layouts; its rows are contiguous there).
#include "backend/cpu/ops/op_kernels.hpp"

namespace telar::backend::cpu {

namespace {

class RefLayerNorm final : public Kernel {
 public:
  explicit RefLayerNorm(KernelIO io) : Kernel(std::move(io)) { define_plain_output(); }
  void forward(bool, std::uint64_t) override {
    ops::layer_norm_forward(node().attr<graph::LayerNormAttrs>(), in(0).data, in(1).data,
                            in(2).data, out().data);
  }
  void backward() override {
    ops::layer_norm_backward(node().attr<graph::LayerNormAttrs>(), in(0).data, in(1).data,
                             out().grad, grad_of(0).tensor, grad_of(1).tensor, grad_of(2).tensor);
  }
};

}  // namespace

const OpKernels op_kernel_defs::kLayerNorm{nullptr, reference_kernel<RefLayerNorm>};

}  // namespace telar::backend::cpu
