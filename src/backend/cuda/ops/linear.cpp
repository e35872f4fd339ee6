// Linear on cuBLAS.
#include "backend/cuda/ops/op_kernels.hpp"

namespace telar::backend::cuda {

namespace {

// Linear with cuBLAS (column-major). A row-major [r, c] matrix is a column-major c x r one, so
// with Wc = W^T (in x out), Xc = x^T (in x B), Yc = y^T (out x B): Yc = Wc^T Xc (+ bias). Over
// the last axis of [B, ..., in], B counts the rows: every leading index.
class CublasLinear final : public Kernel {
 public:
  explicit CublasLinear(KernelIO io) : Kernel(std::move(io)) {
    if (node().attr<graph::LinearAttrs>().post.any())
      no_cuda_kernel(node(), "post-ops (the CPU's inference fusion)");
    define_output();
    in_ = to_int(in(1).shape.at(1), "in_features");
    batch_ = to_int(shape_numel(in(0).shape) / in_, "rows");
    out_ = to_int(in(1).shape.at(0), "out_features");
  }
  void forward(bool, std::uint64_t) override {
    const bool bias = io_.inputs.size() > 2;
    if (bias) {
      kernels::broadcast_rows(stream(), out().f32(), in(2).f32(), batch_, out_);
      check_launch("bias broadcast");
    }
    const float beta = bias ? 1.0f : 0.0f;
    ok(cublasSgemm(io_.ctx->cublas(), CUBLAS_OP_T, CUBLAS_OP_N, out_, batch_, in_, &kOne,
                   in(1).f32(), in_, in(0).f32(), in_, &beta, out().f32(), out_),
       node(), "cublasSgemm (forward)");
  }
  void backward() override {
    const float* dy = out().grad;
    auto h = io_.ctx->cublas();
    if (float* dx = grad_of(0))  // dx^T (in x B) = Wc (in x out) * dy^T (out x B)
      ok(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, in_, batch_, out_, &kOne, in(1).f32(), in_, dy,
                     out_, &kZero, dx, in_),
         node(), "cublasSgemm (input gradient)");
    if (float* dw = grad_of(1))  // dW^T (in x out) = x^T (in x B) * dy (B x out)
      ok(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, in_, out_, batch_, &kOne, in(0).f32(), in_, dy,
                     out_, &kZero, dw, in_),
         node(), "cublasSgemm (weight gradient)");
    if (io_.inputs.size() > 2 && grad_of(2)) {
      kernels::column_sums(stream(), dy, grad_of(2), batch_, out_);
      check_launch("bias gradient");
    }
  }

 private:
  int batch_, in_, out_;
};

}  // namespace

const OpKernels op_kernel_defs::kLinear{kernel_of<CublasLinear>};

}  // namespace telar::backend::cuda
