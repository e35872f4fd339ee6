#include "backend/cpu/dnnl_kernels.hpp"

namespace telar::backend::cpu {

bool parameters_changed(const KernelIO& io, std::uint64_t& seen) {
  if (!io.params_version) return true;
  if (*io.params_version == seen) return false;
  seen = *io.params_version;
  return true;
}

std::unique_ptr<Kernel> make_dnnl_kernel(KernelIO io, LayoutConverter& converter) {
  using graph::OpKind;
  switch (io.node->kind) {
    case OpKind::Linear: return make_dnnl_linear(std::move(io), converter);
    case OpKind::Conv2d: return make_dnnl_conv(std::move(io), converter);
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d:
    case OpKind::GlobalAvgPool: return make_dnnl_pool(std::move(io), converter);
    case OpKind::BatchNorm2d: return make_dnnl_batchnorm(std::move(io), converter);
    case OpKind::ReLU:
    case OpKind::ReLU6:
    case OpKind::Sigmoid:
    case OpKind::Tanh: return make_dnnl_eltwise(std::move(io), converter);
    case OpKind::Softmax: return make_dnnl_softmax(std::move(io), converter);
    case OpKind::Add: return make_dnnl_add(std::move(io), converter);
    case OpKind::EmbeddingBag: return make_fast_embedding_bag(std::move(io));
    default: return nullptr;  // reference kernel
  }
}

}  // namespace telar::backend::cpu
