// Softmax over the last axis on cuDNN: each row of the last axis as one instance.
#include "backend/cuda/ops/op_kernels.hpp"

namespace telar::backend::cuda {

namespace {

class CudnnSoftmax final : public Kernel {
 public:
  explicit CudnnSoftmax(KernelIO io) : Kernel(std::move(io)) {
    define_output();
    const std::int64_t n = out().shape.back();
    desc_.set(shape_numel(out().shape) / n, n, 1, 1);
  }
  void forward(bool, std::uint64_t) override {
    ok(cudnnSoftmaxForward(io_.ctx->cudnn(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE,
                           &kOne, desc_.get(), in(0).data, &kZero, desc_.get(), out().data),
       node(), "cudnnSoftmaxForward");
  }
  void backward() override {
    if (!grad_of(0)) return;
    ok(cudnnSoftmaxBackward(io_.ctx->cudnn(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE,
                            &kOne, desc_.get(), out().data, desc_.get(), out().grad, &kZero,
                            desc_.get(), grad_of(0)),
       node(), "cudnnSoftmaxBackward");
  }

 private:
  TensorDesc desc_;
};

}  // namespace

const OpKernels op_kernel_defs::kSoftmax{kernel_of<CudnnSoftmax>};

}  // namespace telar::backend::cuda
