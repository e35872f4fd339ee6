// The node kernels of the CUDA backend: cuBLAS for Linear, cuDNN (the legacy API, still in
// cuDNN 9) for convolution, batch norm, average pooling and softmax, and the hand-written
// kernels of kernels.cu for the rest. Semantics follow the reference kernels (src/ops).
#include <fmt/format.h>

#include <limits>
#include <vector>

#include "backend/cuda/kernels.hpp"
#include "backend/cuda/plan.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"

// The legacy cuDNN entry points are marked deprecated in cuDNN 9 but remain supported; the
// graph API would buy nothing for these single-op calls.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace telar::backend::cuda {

namespace {

using graph::OpKind;

constexpr float kOne = 1.0f, kZero = 0.0f;
// Largest cuDNN workspace an algorithm may ask for (the fastest ones often want a lot).
constexpr std::size_t kMaxWorkspace = std::size_t{1} << 30;

int to_int(std::int64_t v, std::string_view what) {
  if (v < 0 || v > std::numeric_limits<int>::max())
    fail("CUDA backend: {} = {} does not fit the 32-bit sizes cuBLAS/cuDNN take", what, v);
  return static_cast<int>(v);
}

// Status checks that name the node (formatting only on failure).
template <typename Status>
void ok(Status status, const graph::Node& node, std::string_view call) {
  bool success;
  if constexpr (std::is_same_v<Status, cudnnStatus_t>)
    success = status == CUDNN_STATUS_SUCCESS;
  else if constexpr (std::is_same_v<Status, cublasStatus_t>)
    success = status == CUBLAS_STATUS_SUCCESS;
  else
    success = status == cudaSuccess;
  if (!success)
    check(status, fmt::format("node '{}' ({}): {}", node.name, graph::op_name(node.kind), call));
}

class TensorDesc {
 public:
  TensorDesc() { check(cudnnCreateTensorDescriptor(&d_), "cudnnCreateTensorDescriptor"); }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d_); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
  void set(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
    check(cudnnSetTensor4dDescriptor(d_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, to_int(n, "N"),
                                     to_int(c, "C"), to_int(h, "H"), to_int(w, "W")),
          "cudnnSetTensor4dDescriptor");
  }
  void set(const Shape& s) {
    set(s.at(0), s.at(1), s.size() > 2 ? s[2] : 1, s.size() > 3 ? s[3] : 1);
  }
  cudnnTensorDescriptor_t get() const { return d_; }

 private:
  cudnnTensorDescriptor_t d_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// Linear with cuBLAS (column-major). A row-major [r, c] matrix is a column-major c x r one, so
// with Wc = W^T (in x out), Xc = x^T (in x B), Yc = y^T (out x B): Yc = Wc^T Xc (+ bias).
class CublasLinear final : public Kernel {
 public:
  explicit CublasLinear(KernelIO io) : Kernel(std::move(io)) {
    define_output();
    batch_ = to_int(in(0).shape.at(0), "batch");
    in_ = to_int(in(1).shape.at(1), "in_features");
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

// ---------------------------------------------------------------------------------------------
class CudnnConv final : public Kernel {
 public:
  explicit CudnnConv(KernelIO io) : Kernel(std::move(io)) {
    define_output();
    const auto& a = node().attr<graph::Conv2dAttrs>();
    check(cudnnCreateFilterDescriptor(&w_desc_), "cudnnCreateFilterDescriptor");
    check(cudnnCreateConvolutionDescriptor(&conv_desc_), "cudnnCreateConvolutionDescriptor");
    x_desc_.set(in(0).shape);
    y_desc_.set(out().shape);
    const Shape& w = in(1).shape;
    ok(cudnnSetFilter4dDescriptor(w_desc_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, to_int(w[0], "O"),
                                  to_int(w[1], "C/groups"), to_int(w[2], "kh"), to_int(w[3], "kw")),
       node(), "cudnnSetFilter4dDescriptor");
    ok(cudnnSetConvolution2dDescriptor(
           conv_desc_, to_int(a.pad_h, "pad"), to_int(a.pad_w, "pad"), to_int(a.stride_h, "stride"),
           to_int(a.stride_w, "stride"), to_int(a.dilation_h, "dilation"),
           to_int(a.dilation_w, "dilation"), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
       node(), "cudnnSetConvolution2dDescriptor");
    ok(cudnnSetConvolutionGroupCount(conv_desc_, to_int(a.groups, "groups")), node(),
       "cudnnSetConvolutionGroupCount");
    // FMA math: no TF32 tensor cores, so results compare with the CPU at fp32 tolerances.
    ok(cudnnSetConvolutionMathType(conv_desc_, CUDNN_FMA_MATH), node(),
       "cudnnSetConvolutionMathType");
    int n, c, h, wd;
    ok(cudnnGetConvolution2dForwardOutputDim(conv_desc_, x_desc_.get(), w_desc_, &n, &c, &h, &wd),
       node(), "cudnnGetConvolution2dForwardOutputDim");
    if (Shape{n, c, h, wd} != out().shape)
      fail("internal: node '{}': cuDNN computes output {} where shape inference says {}",
           node().name, shape_str(Shape{n, c, h, wd}), shape_str(out().shape));
    if (io_.inputs.size() > 2) b_desc_.set(1, w[0], 1, 1);

    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int found = 0;
    ok(cudnnGetConvolutionForwardAlgorithm_v7(io_.ctx->cudnn(), x_desc_.get(), w_desc_, conv_desc_,
                                              y_desc_.get(), CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                              &found, perf),
       node(), "cudnnGetConvolutionForwardAlgorithm_v7");
    fwd_algo_ = pick(perf, found, "forward").algo;
    std::size_t bytes = 0;
    ok(cudnnGetConvolutionForwardWorkspaceSize(io_.ctx->cudnn(), x_desc_.get(), w_desc_, conv_desc_,
                                               y_desc_.get(), fwd_algo_, &bytes),
       node(), "cudnnGetConvolutionForwardWorkspaceSize");
    io_.ctx->reserve_workspace(bytes);
  }
  ~CudnnConv() override {
    cudnnDestroyConvolutionDescriptor(conv_desc_);
    cudnnDestroyFilterDescriptor(w_desc_);
  }
  void prepare_backward() override {
    auto h = io_.ctx->cudnn();
    std::size_t bytes = 0;
    if (grad_of(0)) {
      cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      int found = 0;
      ok(cudnnGetConvolutionBackwardDataAlgorithm_v7(
             h, w_desc_, y_desc_.get(), conv_desc_, x_desc_.get(),
             CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &found, perf),
         node(), "cudnnGetConvolutionBackwardDataAlgorithm_v7");
      data_algo_ = pick(perf, found, "backward data").algo;
      ok(cudnnGetConvolutionBackwardDataWorkspaceSize(h, w_desc_, y_desc_.get(), conv_desc_,
                                                      x_desc_.get(), data_algo_, &bytes),
         node(), "cudnnGetConvolutionBackwardDataWorkspaceSize");
      io_.ctx->reserve_workspace(bytes);
    }
    if (grad_of(1)) {
      cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      int found = 0;
      ok(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
             h, x_desc_.get(), y_desc_.get(), conv_desc_, w_desc_,
             CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &found, perf),
         node(), "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
      filter_algo_ = pick(perf, found, "backward filter").algo;
      ok(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, x_desc_.get(), y_desc_.get(), conv_desc_,
                                                        w_desc_, filter_algo_, &bytes),
         node(), "cudnnGetConvolutionBackwardFilterWorkspaceSize");
      io_.ctx->reserve_workspace(bytes);
    }
  }
  void forward(bool, std::uint64_t) override {
    auto h = io_.ctx->cudnn();
    ok(cudnnConvolutionForward(h, &kOne, x_desc_.get(), in(0).data, w_desc_, in(1).data, conv_desc_,
                               fwd_algo_, io_.ctx->workspace(), io_.ctx->workspace_bytes(), &kZero,
                               y_desc_.get(), out().data),
       node(), "cudnnConvolutionForward");
    if (io_.inputs.size() > 2)
      ok(cudnnAddTensor(h, &kOne, b_desc_.get(), in(2).data, &kOne, y_desc_.get(), out().data),
         node(), "cudnnAddTensor (bias)");
  }
  void backward() override {
    auto h = io_.ctx->cudnn();
    if (grad_of(0))
      ok(cudnnConvolutionBackwardData(
             h, &kOne, w_desc_, in(1).data, y_desc_.get(), out().grad, conv_desc_, data_algo_,
             io_.ctx->workspace(), io_.ctx->workspace_bytes(), &kZero, x_desc_.get(), grad_of(0)),
         node(), "cudnnConvolutionBackwardData");
    if (grad_of(1))
      ok(cudnnConvolutionBackwardFilter(h, &kOne, x_desc_.get(), in(0).data, y_desc_.get(),
                                        out().grad, conv_desc_, filter_algo_, io_.ctx->workspace(),
                                        io_.ctx->workspace_bytes(), &kZero, w_desc_, grad_of(1)),
         node(), "cudnnConvolutionBackwardFilter");
    if (io_.inputs.size() > 2 && grad_of(2))
      ok(cudnnConvolutionBackwardBias(h, &kOne, y_desc_.get(), out().grad, &kZero, b_desc_.get(),
                                      grad_of(2)),
         node(), "cudnnConvolutionBackwardBias");
  }

 private:
  // The best-ranked algorithm that cuDNN can run within the workspace limit.
  template <typename Perf>
  Perf pick(const Perf* perf, int found, std::string_view pass) const {
    for (int i = 0; i < found; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kMaxWorkspace) return perf[i];
    fail(
        "CUDA backend: node '{}' (Conv2d): cuDNN has no {} algorithm for input {} within {} MiB "
        "of workspace",
        node().name, pass, shape_str(in(0).shape), kMaxWorkspace >> 20);
  }

  TensorDesc x_desc_, y_desc_, b_desc_;
  cudnnFilterDescriptor_t w_desc_ = nullptr;
  cudnnConvolutionDescriptor_t conv_desc_ = nullptr;
  cudnnConvolutionFwdAlgo_t fwd_algo_{};
  cudnnConvolutionBwdDataAlgo_t data_algo_{};
  cudnnConvolutionBwdFilterAlgo_t filter_algo_{};
};

// ---------------------------------------------------------------------------------------------
// BatchNorm2d with cuDNN's spatial mode: biased variance for normalization, running variance
// updated with the unbiased one, running = (1 - factor) running + factor batch with
// factor = momentum; the same conventions as ops/batchnorm.cpp.
class CudnnBatchNorm final : public Kernel {
 public:
  explicit CudnnBatchNorm(KernelIO io) : Kernel(std::move(io)) {
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

// ---------------------------------------------------------------------------------------------
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

class CudnnSoftmax final : public Kernel {
 public:
  explicit CudnnSoftmax(KernelIO io) : Kernel(std::move(io)) {
    define_output();
    desc_.set(out().shape.at(0), out().shape.at(1), 1, 1);
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

// ---------------------------------------------------------------------------------------------
class Activation final : public Kernel {
 public:
  Activation(KernelIO io, int kind) : Kernel(std::move(io)), kind_(kind) { define_output(); }
  void forward(bool, std::uint64_t) override {
    kernels::activation_forward(stream(), kind_, in(0).f32(), out().f32(), out().numel);
    check_launch("activation forward");
  }
  void backward() override {
    if (!grad_of(0)) return;
    kernels::activation_backward(stream(), kind_, in(0).f32(), out().f32(), out().grad, grad_of(0),
                                 out().numel);
    check_launch("activation backward");
  }

 private:
  int kind_;
};

kernels::PoolShape pool_shape(const graph::Pool2dAttrs& a, const Shape& x, const Shape& y) {
  return {x[0] * x[1], x[2],       x[3],       y[2],    y[3],   a.kernel_h,
          a.kernel_w,  a.stride_h, a.stride_w, a.pad_h, a.pad_w};
}

class MaxPool final : public Kernel {
 public:
  explicit MaxPool(KernelIO io) : Kernel(std::move(io)) {
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

// Flatten relabels: the output aliases the input's device storage.
class Flatten final : public Kernel {
 public:
  explicit Flatten(KernelIO io) : Kernel(std::move(io)) {
    out().data = in(0).data;
    out().numel = shape_numel(out().shape);
  }
  void forward(bool, std::uint64_t) override {}
  void backward() override {
    if (!grad_of(0)) return;
    kernels::copy(stream(), grad_of(0), out().grad, out().numel);
    check_launch("flatten backward");
  }
};

class Dropout final : public Kernel {
 public:
  explicit Dropout(KernelIO io) : Kernel(std::move(io)) {
    define_output();
    mask_.resize(static_cast<std::size_t>(std::max<std::int64_t>(out().numel, 1)));
  }
  void forward(bool training, std::uint64_t stream_number) override {
    const float p = node().attr<graph::DropoutAttrs>().p;
    require(p >= 0.0f && p < 1.0f, "Dropout: p={} must be in [0, 1)", p);
    if (!training || p == 0.0f) {
      kernels::copy(stream(), out().f32(), in(0).f32(), out().numel);
      mask_valid_ = false;
    } else {
      // The CPU's draw: one u64 from the node's stream seeds the per-block streams.
      Rng rng = Rng::derive(io_.seed, stream_number);
      kernels::dropout_forward(stream(), rng.next_u64(), p, in(0).f32(), out().f32(),
                               static_cast<std::uint8_t*>(mask_.get()), out().numel);
      mask_valid_ = true;
    }
    check_launch("dropout forward");
  }
  void backward() override {
    if (!grad_of(0)) return;
    if (mask_valid_)
      kernels::dropout_backward(stream(), node().attr<graph::DropoutAttrs>().p,
                                static_cast<const std::uint8_t*>(mask_.get()), out().grad,
                                grad_of(0), out().numel);
    else
      kernels::copy(stream(), grad_of(0), out().grad, out().numel);
    check_launch("dropout backward");
  }

 private:
  DeviceBuffer mask_;
  bool mask_valid_ = false;
};

class Add final : public Kernel {
 public:
  explicit Add(KernelIO io) : Kernel(std::move(io)) { define_output(); }
  void forward(bool, std::uint64_t) override {
    kernels::add(stream(), in(0).f32(), in(1).f32(), out().f32(), out().numel);
    check_launch("add forward");
  }
  void backward() override {
    for (std::size_t i = 0; i < 2; ++i)
      if (grad_of(i)) kernels::copy(stream(), grad_of(i), out().grad, out().numel);
    check_launch("add backward");
  }
};

class Concat final : public Kernel {
 public:
  explicit Concat(KernelIO io) : Kernel(std::move(io)) {
    define_output();
    if (node().attr<graph::ConcatAttrs>().axis != 1)
      fail("internal: node '{}': Concat over axis {} (only axis 1 is supported)", node().name,
           node().attr<graph::ConcatAttrs>().axis);
  }
  void forward(bool, std::uint64_t) override {
    const std::int64_t batch = out().shape.at(0), total = out().numel / batch;
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < io_.inputs.size(); ++i) {
      const std::int64_t width = in(i).numel / batch;
      kernels::concat_part(stream(), in(i).f32(), out().f32(), batch, width, offset, total);
      offset += width;
    }
    check_launch("concat forward");
  }
  void backward() override {
    const std::int64_t batch = out().shape.at(0), total = out().numel / batch;
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < io_.inputs.size(); ++i) {
      const std::int64_t width = in(i).numel / batch;
      if (grad_of(i))
        kernels::split_part(stream(), out().grad, grad_of(i), batch, width, offset, total);
      offset += width;
    }
    check_launch("concat backward");
  }
};

// Indices and offsets come from data files: checked on the host (the caller's tensors) before
// any kernel reads them, with the reference kernel's messages.
void validate_bags(const graph::EmbeddingBagAttrs& a, const Tensor& indices, const Tensor& offsets,
                   const Tensor* psw) {
  const std::int64_t bags = offsets.numel(), nnz = indices.numel();
  const std::int64_t* off = offsets.data<std::int64_t>();
  const std::int64_t* idx = indices.data<std::int64_t>();
  if (psw && psw->numel() != nnz)
    fail("EmbeddingBag: {} per-sample weights for {} indices; give one weight per index",
         psw->numel(), nnz);
  if (bags > 0 && off[0] != 0)
    fail(
        "EmbeddingBag: offsets[0] is {}, but the first bag must start at index 0 (offsets are "
        "the start of each bag within the {} indices)",
        off[0], nnz);
  for (std::int64_t b = 0; b + 1 < bags; ++b)
    if (off[b + 1] < off[b])
      fail("EmbeddingBag: offsets must be non-decreasing, but bag {} starts at {} and bag {} at {}",
           b, off[b], b + 1, off[b + 1]);
  if (bags > 0 && off[bags - 1] > nnz)
    fail("EmbeddingBag: the last bag ({}) starts at offset {}, past the end of the {} indices",
         bags - 1, off[bags - 1], nnz);
  for (std::int64_t k = 0; k < nnz; ++k)
    if (idx[k] < 0 || idx[k] >= a.num_embeddings)
      fail(
          "EmbeddingBag: index {} (position {}) is out of range for a table of {} rows; indices "
          "must be in [0, {})",
          idx[k], k, a.num_embeddings, a.num_embeddings);
}

class EmbeddingBag final : public Kernel {
 public:
  explicit EmbeddingBag(KernelIO io) : Kernel(std::move(io)) { define_output(); }
  void forward(bool, std::uint64_t) override {
    const auto& a = node().attr<graph::EmbeddingBagAttrs>();
    if (in(0).host && in(1).host)
      validate_bags(a, *in(0).host, *in(1).host, psw() && in(3).host ? in(3).host : nullptr);
    kernels::embedding_bag_forward(stream(), in(0).i64(), in(1).i64(), in(2).f32(),
                                   psw() ? psw()->f32() : nullptr, out().f32(), in(1).numel,
                                   in(0).numel, a.dim, a.mode == graph::EmbeddingBagMode::Mean);
    check_launch("embedding bag forward");
  }
  void backward() override {
    if (!grad_of(2)) return;
    const auto& a = node().attr<graph::EmbeddingBagAttrs>();
    kernels::embedding_bag_backward(
        stream(), in(0).i64(), in(1).i64(), psw() ? psw()->f32() : nullptr, out().grad, grad_of(2),
        a.num_embeddings, in(1).numel, in(0).numel, a.dim, a.mode == graph::EmbeddingBagMode::Mean);
    check_launch("embedding bag backward");
  }

 private:
  const Slot* psw() const { return io_.inputs.size() > 3 ? &in(3) : nullptr; }
};

class DotInteraction final : public Kernel {
 public:
  explicit DotInteraction(KernelIO io) : Kernel(std::move(io)) {
    define_output();
    std::vector<const float*> ptrs;
    for (const Slot* s : io_.inputs) ptrs.push_back(s->f32());
    vectors_.resize(ptrs.size() * sizeof(float*));
    ok(cudaMemcpy(vectors_.get(), ptrs.data(), vectors_.bytes(), cudaMemcpyHostToDevice), node(),
       "uploading input pointers");
  }
  void prepare_backward() override {
    std::vector<float*> ptrs;
    for (std::size_t i = 0; i < io_.inputs.size(); ++i) ptrs.push_back(grad_of(i));
    dvectors_.resize(ptrs.size() * sizeof(float*));
    ok(cudaMemcpy(dvectors_.get(), ptrs.data(), dvectors_.bytes(), cudaMemcpyHostToDevice), node(),
       "uploading gradient pointers");
  }
  void forward(bool, std::uint64_t) override {
    const auto& a = node().attr<graph::DotInteractionAttrs>();
    kernels::dot_interaction_forward(stream(), static_cast<const float* const*>(vectors_.get()),
                                     out().f32(), out().shape.at(0), a.num_sparse + 1, a.dim,
                                     a.self_interaction);
    check_launch("dot interaction forward");
  }
  void backward() override {
    const auto& a = node().attr<graph::DotInteractionAttrs>();
    kernels::dot_interaction_backward(stream(), static_cast<const float* const*>(vectors_.get()),
                                      static_cast<float* const*>(dvectors_.get()), out().grad,
                                      out().shape.at(0), a.num_sparse + 1, a.dim,
                                      a.self_interaction);
    check_launch("dot interaction backward");
  }

 private:
  DeviceBuffer vectors_, dvectors_;
};

void check_labels(std::string_view loss, const Tensor& labels, std::int64_t classes) {
  const std::int64_t* lp = labels.data<std::int64_t>();
  for (std::int64_t n = 0; n < labels.numel(); ++n)
    if (lp[n] < 0 || lp[n] >= classes)
      fail("{}: label {} of sample {} is out of range for {} classes; labels must be in [0, {})",
           loss, lp[n], n, classes, classes);
}

class Loss final : public Kernel {
 public:
  explicit Loss(KernelIO io) : Kernel(std::move(io)) { define_output(); }
  void forward(bool, std::uint64_t) override {
    const Slot& x = in(0);
    const Slot& t = in(1);
    switch (node().kind) {
      case OpKind::CrossEntropy:
        if (t.host) check_labels("CrossEntropy", *t.host, x.shape.at(1));
        kernels::cross_entropy_forward(stream(), x.f32(), t.i64(), out().f32(), x.shape.at(0),
                                       x.shape.at(1));
        break;
      case OpKind::BCEWithLogits:
        kernels::bce_forward(stream(), x.f32(), t.f32(), out().f32(), x.numel);
        break;
      default:
        if (t.dtype == DType::I64) {
          if (t.host) check_labels("MSE", *t.host, x.shape.at(1));
          kernels::mse_forward(stream(), x.f32(), nullptr, t.i64(), out().f32(), x.numel,
                               x.shape.at(1));
        } else {
          kernels::mse_forward(stream(), x.f32(), t.f32(), nullptr, out().f32(), x.numel, 1);
        }
    }
    check_launch("loss forward");
  }
  void backward() override {
    if (!grad_of(0)) return;
    const Slot& x = in(0);
    const Slot& t = in(1);
    switch (node().kind) {
      case OpKind::CrossEntropy:
        kernels::cross_entropy_backward(stream(), x.f32(), t.i64(), out().grad, grad_of(0),
                                        x.shape.at(0), x.shape.at(1));
        break;
      case OpKind::BCEWithLogits:
        kernels::bce_backward(stream(), x.f32(), t.f32(), out().grad, grad_of(0), x.numel);
        break;
      default:
        if (t.dtype == DType::I64)
          kernels::mse_backward(stream(), x.f32(), nullptr, t.i64(), out().grad, grad_of(0),
                                x.numel, x.shape.at(1));
        else
          kernels::mse_backward(stream(), x.f32(), t.f32(), nullptr, out().grad, grad_of(0),
                                x.numel, 1);
    }
    check_launch("loss backward");
  }
};

}  // namespace

std::unique_ptr<Kernel> make_kernel(KernelIO io) {
  switch (io.node->kind) {
    case OpKind::Linear:
      return std::make_unique<CublasLinear>(std::move(io));
    case OpKind::Conv2d:
      return std::make_unique<CudnnConv>(std::move(io));
    case OpKind::BatchNorm2d:
      return std::make_unique<CudnnBatchNorm>(std::move(io));
    case OpKind::ReLU:
      return std::make_unique<Activation>(std::move(io), 0);
    case OpKind::ReLU6:
      return std::make_unique<Activation>(std::move(io), 1);
    case OpKind::Sigmoid:
      return std::make_unique<Activation>(std::move(io), 2);
    case OpKind::Tanh:
      return std::make_unique<Activation>(std::move(io), 3);
    case OpKind::Softmax:
      return std::make_unique<CudnnSoftmax>(std::move(io));
    case OpKind::MaxPool2d:
      return std::make_unique<MaxPool>(std::move(io));
    case OpKind::AvgPool2d:
      return std::make_unique<CudnnAvgPool>(std::move(io));
    case OpKind::GlobalAvgPool:
      return std::make_unique<GlobalAvgPool>(std::move(io));
    case OpKind::Flatten:
      return std::make_unique<Flatten>(std::move(io));
    case OpKind::Dropout:
      return std::make_unique<Dropout>(std::move(io));
    case OpKind::Add:
      return std::make_unique<Add>(std::move(io));
    case OpKind::Concat:
      return std::make_unique<Concat>(std::move(io));
    case OpKind::EmbeddingBag:
      return std::make_unique<EmbeddingBag>(std::move(io));
    case OpKind::DotInteraction:
      return std::make_unique<DotInteraction>(std::move(io));
    case OpKind::CrossEntropy:
    case OpKind::BCEWithLogits:
    case OpKind::MSE:
      return std::make_unique<Loss>(std::move(io));
  }
  fail("internal: the CUDA backend has no kernel for {}", graph::op_name(io.node->kind));
}

}  // namespace telar::backend::cuda
