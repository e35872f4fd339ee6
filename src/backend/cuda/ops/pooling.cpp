// AvgPool2d on cuDNN; MaxPool2d and GlobalAvgPool on kernels.cu (the reference's tie breaking).
#include "backend/cuda/ops/op_kernels.hpp"

namespace telar::backend::cuda {

namespace {

class CudnnAvgPool final : public Kernel {
 public:
  explicit CudnnAvgPool(KernelIO io) : Kernel(std::move(io)) {
    define_output();
    const auto& a = node().attr<graph::Pool2dAttrs>();
    check(cudnnCreatePoolingDescriptor(&pool_desc_), "cudnnCreatePoolingDescriptor");
    ok(cudnnSetPooling2dDescriptor(
           pool_desc_,
           a.count_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                               : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
           CUDNN_PROPAGATE_NAN, to_int(a.kernel_h, "kernel"), to_int(a.kernel_w, "kernel"),
           to_int(a.pad_h, "pad"), to_int(a.pad_w, "pad"), to_int(a.stride_h, "stride"),
           to_int(a.stride_w, "stride")),
       node(), "cudnnSetPooling2dDescriptor");
    x_desc_.set(in(0).shape);
    y_desc_.set(out().shape);
    int n, c, h, w;
    ok(cudnnGetPooling2dForwardOutputDim(pool_desc_, x_desc_.get(), &n, &c, &h, &w), node(),
       "cudnnGetPooling2dForwardOutputDim");
    if (Shape{n, c, h, w} != out().shape)
      fail("internal: node '{}': cuDNN pools to {} where shape inference says {}", node().name,
           shape_str(Shape{n, c, h, w}), shape_str(out().shape));
  }
  ~CudnnAvgPool() override { cudnnDestroyPoolingDescriptor(pool_desc_); }
  void forward(bool, std::uint64_t) override {
    ok(cudnnPoolingForward(io_.ctx->cudnn(), pool_desc_, &kOne, x_desc_.get(), in(0).data, &kZero,
                           y_desc_.get(), out().data),
       node(), "cudnnPoolingForward");
  }
  void backward() override {
    if (!grad_of(0)) return;
    ok(cudnnPoolingBackward(io_.ctx->cudnn(), pool_desc_, &kOne, y_desc_.get(), out().data,
                            y_desc_.get(), out().grad, x_desc_.get(), in(0).data, &kZero,
                            x_desc_.get(), grad_of(0)),
       node(), "cudnnPoolingBackward");
  }

 private:
  cudnnPoolingDescriptor_t pool_desc_ = nullptr;
  TensorDesc x_desc_, y_desc_;
};

kernels::PoolShape pool_shape(const graph::Pool2dAttrs& a, const Shape& x, const Shape& y) {
  return {x[0] * x[1], x[2],       x[3],       y[2],    y[3],   a.kernel_h,
          a.kernel_w,  a.stride_h, a.stride_w, a.pad_h, a.pad_w};
}

class MaxPool final : public Kernel {
 public:
  explicit MaxPool(KernelIO io) : Kernel(std::move(io)) {
    const auto& a = node().attr<graph::Pool2dAttrs>();
    if (a.end_pad.any()) no_cuda_kernel(node(), "padding at the end (the CPU's inference passes)");
    define_output();
    if (in(0).shape[2] * in(0).shape[3] > std::numeric_limits<std::int32_t>::max())
      fail("MaxPool2d: a {}x{} plane is too large for i32 argmax indices", in(0).shape[2],
           in(0).shape[3]);
    shape_ = pool_shape(node().attr<graph::Pool2dAttrs>(), in(0).shape, out().shape);
    argmax_.resize(static_cast<std::size_t>(out().numel) * sizeof(std::int32_t));
  }
  void forward(bool, std::uint64_t) override {
    kernels::maxpool_forward(stream(), shape_, in(0).f32(), out().f32(),
                             static_cast<std::int32_t*>(argmax_.get()));
    check_launch("max pooling forward");
  }
  void backward() override {
    if (!grad_of(0)) return;
    kernels::maxpool_backward(stream(), shape_, static_cast<const std::int32_t*>(argmax_.get()),
                              out().grad, grad_of(0));
    check_launch("max pooling backward");
  }

 private:
  kernels::PoolShape shape_{};
  DeviceBuffer argmax_;
};

class GlobalAvgPool final : public Kernel {
 public:
  explicit GlobalAvgPool(KernelIO io) : Kernel(std::move(io)) { define_output(); }
  void forward(bool, std::uint64_t) override {
    const Shape& x = in(0).shape;
    kernels::global_avgpool_forward(stream(), in(0).f32(), out().f32(), x[0] * x[1], x[2] * x[3]);
    check_launch("global average pooling forward");
  }
  void backward() override {
    if (!grad_of(0)) return;
    const Shape& x = in(0).shape;
    kernels::global_avgpool_backward(stream(), out().grad, grad_of(0), x[0] * x[1], x[2] * x[3]);
    check_launch("global average pooling backward");
  }
};

}  // namespace

const OpKernels op_kernel_defs::kMaxPool2d{kernel_of<MaxPool>};
const OpKernels op_kernel_defs::kAvgPool2d{kernel_of<CudnnAvgPool>};
const OpKernels op_kernel_defs::kGlobalAvgPool{kernel_of<GlobalAvgPool>};

}  // namespace telar::backend::cuda
