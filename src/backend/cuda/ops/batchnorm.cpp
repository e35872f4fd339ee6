// BatchNorm2d on cuDNN.
#include "backend/cuda/ops/op_kernels.hpp"

namespace telar::backend::cuda {

namespace {

// BatchNorm2d with cuDNN's spatial mode: biased variance for normalization, running variance
// updated with the unbiased one, running = (1 - factor) running + factor batch with
// factor = momentum; the same conventions as ops/batchnorm.cpp.
class CudnnBatchNorm final : public Kernel {
 public:
  explicit CudnnBatchNorm(KernelIO io) : Kernel(std::move(io)) {
    if (node().attr<graph::BatchNormAttrs>().post.any())
      no_cuda_kernel(node(), "post-ops (the CPU's inference fusion)");
    define_output();
    x_desc_.set(in(0).shape);
    ok(cudnnDeriveBNTensorDescriptor(bn_desc_.get(), x_desc_.get(), CUDNN_BATCHNORM_SPATIAL),
       node(), "cudnnDeriveBNTensorDescriptor");
    const std::int64_t c = in(0).shape.at(1);
    saved_mean_.resize(static_cast<std::size_t>(c) * sizeof(float));
    saved_inv_std_.resize(static_cast<std::size_t>(c) * sizeof(float));
  }
  void prepare_backward() override {
    const std::int64_t c = in(0).shape.at(1);
    if (!grad_of(0)) scratch_dx_.resize(static_cast<std::size_t>(in(0).numel) * sizeof(float));
    if (!grad_of(1) || !grad_of(2))
      scratch_params_.resize(2 * static_cast<std::size_t>(c) * sizeof(float));
  }
  void forward(bool training, std::uint64_t) override {
    const auto& a = node().attr<graph::BatchNormAttrs>();
    auto h = io_.ctx->cudnn();
    if (training) {
      const Shape& s = in(0).shape;
      if (s.at(0) * s.at(2) * s.at(3) <= 1)
        fail(
            "BatchNorm2d in training mode needs more than one value per channel, got input {}; "
            "use a batch larger than 1 or evaluation mode",
            shape_str(s));
      ok(cudnnBatchNormalizationForwardTraining(
             h, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, x_desc_.get(), in(0).data, x_desc_.get(),
             out().data, bn_desc_.get(), in(1).data, in(2).data, a.momentum, in(3).data, in(4).data,
             a.eps, saved_mean_.get(), saved_inv_std_.get()),
         node(), "cudnnBatchNormalizationForwardTraining");
    } else {
      ok(cudnnBatchNormalizationForwardInference(
             h, CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, x_desc_.get(), in(0).data, x_desc_.get(),
             out().data, bn_desc_.get(), in(1).data, in(2).data, in(3).data, in(4).data, a.eps),
         node(), "cudnnBatchNormalizationForwardInference");
    }
  }
  void backward() override {
    const auto& a = node().attr<graph::BatchNormAttrs>();
    const std::int64_t c = in(0).shape.at(1);
    float* dx = grad_of(0) ? grad_of(0) : scratch_dx_.f32();
    float* dgamma = grad_of(1) ? grad_of(1) : scratch_params_.f32();
    float* dbeta = grad_of(2) ? grad_of(2) : scratch_params_.f32() + c;
    ok(cudnnBatchNormalizationBackward(
           io_.ctx->cudnn(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, &kOne, &kZero, x_desc_.get(),
           in(0).data, x_desc_.get(), out().grad, x_desc_.get(), dx, bn_desc_.get(), in(1).data,
           dgamma, dbeta, a.eps, saved_mean_.get(), saved_inv_std_.get()),
       node(), "cudnnBatchNormalizationBackward");
  }

 private:
  TensorDesc x_desc_, bn_desc_;
  DeviceBuffer saved_mean_, saved_inv_std_, scratch_dx_, scratch_params_;
};

}  // namespace

const OpKernels op_kernel_defs::kBatchNorm2d{kernel_of<CudnnBatchNorm>};

}  // namespace telar::backend::cuda
