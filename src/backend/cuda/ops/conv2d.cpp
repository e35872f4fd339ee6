// Conv2d on cuDNN (grouped and depthwise too).
#include "backend/cuda/ops/op_kernels.hpp"

namespace telar::backend::cuda {

namespace {

// Largest cuDNN workspace an algorithm may ask for (the fastest ones often want a lot).
constexpr std::size_t kMaxWorkspace = std::size_t{1} << 30;

class CudnnConv final : public Kernel {
 public:
  explicit CudnnConv(KernelIO io) : Kernel(std::move(io)) {
    const auto& a = node().attr<graph::Conv2dAttrs>();
    if (a.post.any()) no_cuda_kernel(node(), "post-ops (the CPU's inference fusion)");
    define_output();
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

}  // namespace

const OpKernels op_kernel_defs::kConv2d{kernel_of<CudnnConv>};

}  // namespace telar::backend::cuda
