#pragma once
// Reference kernels: forward and backward of every op in portable C++, written for clarity.
// They are the numerical oracle for the oneDNN, CUDA and simulator paths, and the fallback
// where a backend has no kernel of its own.
//
// Conventions:
// - Tensors are dense, row-major ("plain" layouts: NCHW activations, OIHW conv weights,
//   [out, in] linear weights). f32 unless said otherwise; indices and labels are i64.
// - Outputs are preallocated by the caller with the right shape; kernels overwrite them.
// - Backward kernels overwrite their gradient outputs (they do not accumulate); a null
//   pointer means "not needed" (e.g. no dx for the first layer).
// - Kernels throw telar::Error on bad input that a user can cause (an index out of range);
//   shape agreement is guaranteed by shape inference and only asserted cheaply.
#include <cstdint>
#include <span>
#include <vector>

#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "graph/op.hpp"

namespace telar::ops {

using graph::BatchNormAttrs;
using graph::Conv2dAttrs;
using graph::DotInteractionAttrs;
using graph::EmbeddingBagAttrs;
using graph::LayerNormAttrs;
using graph::PadAttrs;
using graph::Pool2dAttrs;
using graph::ResizeAttrs;
using graph::SliceAttrs;

// ---- Linear: y[B,...,out] = x[B,...,in] * w[out,in]^T + b[out] (over the last axis)
void linear_forward(const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y);
void linear_backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx, Tensor* dw,
                     Tensor* db);

// ---- Conv2d (stride, padding, dilation, groups; depthwise is groups == in_channels)
void conv2d_forward(const Conv2dAttrs& a, const Tensor& x, const Tensor& w, const Tensor* b,
                    Tensor& y);
void conv2d_backward(const Conv2dAttrs& a, const Tensor& x, const Tensor& w, const Tensor& dy,
                     Tensor* dx, Tensor* dw, Tensor* db);

// ---- ConvTranspose2d: the input gradient of the Conv2d a.as_conv() (weight [in, out/groups, kh,
// kw]), plus the bias.
void conv_transpose2d_forward(const graph::ConvTranspose2dAttrs& a, const Tensor& x,
                              const Tensor& w, const Tensor* b, Tensor& y);
void conv_transpose2d_backward(const graph::ConvTranspose2dAttrs& a, const Tensor& x,
                               const Tensor& w, const Tensor& dy, Tensor* dx, Tensor* dw,
                               Tensor* db);

// ---- BatchNorm2d. Training mode normalizes with the batch statistics (biased variance),
// saves mean and 1/sqrt(var+eps) per channel for backward, and updates the running statistics
// with the unbiased variance: running = (1-momentum)*running + momentum*batch.
void batchnorm_forward_train(const BatchNormAttrs& a, const Tensor& x, const Tensor& gamma,
                             const Tensor& beta, Tensor& running_mean, Tensor& running_var,
                             Tensor& y, Tensor& saved_mean, Tensor& saved_inv_std);
void batchnorm_forward_eval(const BatchNormAttrs& a, const Tensor& x, const Tensor& gamma,
                            const Tensor& beta, const Tensor& running_mean,
                            const Tensor& running_var, Tensor& y);
// Backward of the training-mode forward.
void batchnorm_backward(const BatchNormAttrs& a, const Tensor& x, const Tensor& gamma,
                        const Tensor& saved_mean, const Tensor& saved_inv_std, const Tensor& dy,
                        Tensor* dx, Tensor* dgamma, Tensor* dbeta);

// ---- Element-wise activations. LeakyReLU: x < 0 ? alpha * x : x; HardSigmoid:
// clamp(alpha * x + beta, 0, 1); HardSwish: x * clamp(x + 3, 0, 6) / 6 (PyTorch's); SiLU:
// x * sigmoid(x); GELU: x * (1 + erf(x / sqrt(2))) / 2; Sqrt; Erf (the Gauss error function,
// GELU's); Pow: x ^ alpha.
enum class Activation {
  ReLU,
  ReLU6,
  Sigmoid,
  Tanh,
  LeakyReLU,
  HardSigmoid,
  HardSwish,
  SiLU,
  GELU,
  Sqrt,
  Erf,
  Pow
};
struct ActivationParams {
  float alpha = 0.0f, beta = 0.0f;
};
// The activation of an activation op (OpKind::ReLU ... OpKind::Pow).
Activation activation_of(graph::OpKind kind);
// x and y may be the same tensor.
void activation_forward(Activation kind, const Tensor& x, Tensor& y, ActivationParams p = {});
// Uses y (Sigmoid, Tanh, Sqrt) or x (the others), whichever the derivative needs.
void activation_backward(Activation kind, const Tensor& x, const Tensor& y, const Tensor& dy,
                         Tensor& dx, ActivationParams p = {});

// ---- Post-ops of an inference-compiled Conv2d or Linear (graph::PostOps), in place on its
// output y: y += summand (post.sum; same shape), then the activation. Forward only: the
// inference passes that set them never run on a training graph.
void apply_post_ops(const graph::PostOps& post, const Tensor* summand, Tensor& y);

// ---- Softmax over the last axis (of [B, N], or of [B, ..., N]: each row on its own)
void softmax_forward(const Tensor& x, Tensor& y);
void softmax_backward(const Tensor& y, const Tensor& dy, Tensor& dx);

// ---- MatMul: y[i] = a[i] b[i] for each leading index i of a[..., M, K] and b[..., K, N]; the
// backward: da[i] = dy[i] b[i]^T, db[i] = a[i]^T dy[i].
void matmul_forward(const Tensor& a, const Tensor& b, Tensor& y);
void matmul_backward(const Tensor& a, const Tensor& b, const Tensor& dy, Tensor* da, Tensor* db);

// ---- Expand: y[n] = w[0] for each sample n of y (w is [1, ...]); dw sums dy over the samples.
void expand_forward(const Tensor& w, Tensor& y);
void expand_backward(const Tensor& dy, Tensor& dw);

// ---- Pooling. MaxPool records the flat input index (within its [H*W] plane) of each max in
// `argmax` (i32, same shape as y); ties go to the first element in window order.
void maxpool2d_forward(const Pool2dAttrs& a, const Tensor& x, Tensor& y, Tensor& argmax);
void maxpool2d_backward(const Pool2dAttrs& a, const Tensor& argmax, const Tensor& dy, Tensor& dx);
void avgpool2d_forward(const Pool2dAttrs& a, const Tensor& x, Tensor& y);
void avgpool2d_backward(const Pool2dAttrs& a, const Tensor& dy, Tensor& dx);
void global_avgpool_forward(const Tensor& x, Tensor& y);    // [B,C,H,W] -> [B,C]
void global_avgpool_backward(const Tensor& dy, Tensor& dx);

// ---- Dropout (inverted: kept values scaled by 1/(1-p)); mask (u8) records kept elements.
void dropout_forward(float p, Rng& rng, const Tensor& x, Tensor& y, Tensor& mask);
void dropout_backward(float p, const Tensor& mask, const Tensor& dy, Tensor& dx);

// ---- Add, Sub, Mul, Div with NumPy broadcasting: y has the broadcast shape of a and b (and
// may be an operand of that shape: each element is read before it is written). The backward
// sums the gradient over the dimensions an operand was stretched along.
enum class Binary { Add, Sub, Mul, Div };
void binary_forward(Binary op, const Tensor& a, const Tensor& b, Tensor& y);
void binary_backward(Binary op, const Tensor& a, const Tensor& b, const Tensor& dy, Tensor* da,
                     Tensor* db);

// ---- Data movement. Transpose: y's dimension d is x's dimension perm[d]; its backward is the
// transpose by the inverse permutation. Slice: [start, end) of one axis. Pad: a constant border
// around the two spatial axes of NCHW; its backward crops.
void transpose_forward(std::span<const std::int64_t> perm, const Tensor& x, Tensor& y);
void transpose_backward(std::span<const std::int64_t> perm, const Tensor& dy, Tensor& dx);
void slice_forward(const SliceAttrs& a, const Tensor& x, Tensor& y);
void slice_backward(const SliceAttrs& a, const Tensor& dy, Tensor& dx);
void pad_forward(const PadAttrs& a, const Tensor& x, Tensor& y);
void pad_backward(const PadAttrs& a, const Tensor& dy, Tensor& dx);

// ---- Resize of the spatial axes of NCHW (graph/op.hpp's ResizeAttrs: nearest, or linear with
// half pixels or aligned corners); the backward adds each output's gradient to the input pixels
// it read, by the weights it read them with.
void resize_forward(const ResizeAttrs& a, const Tensor& x, Tensor& y);
void resize_backward(const ResizeAttrs& a, const Tensor& dy, Tensor& dx);

// ---- ReduceMean over one axis (kept, size 1); its backward spreads dy / n over the axis.
void reduce_mean_forward(std::int64_t axis, const Tensor& x, Tensor& y);
void reduce_mean_backward(std::int64_t axis, const Tensor& dy, Tensor& dx);

// ---- LayerNorm over the last axis (graph/op.hpp's LayerNormAttrs): each row of x[..., W]
// normalised by its mean and biased variance, then scaled and shifted per feature. The backward
// recomputes the statistics from x; dscale and dbias (either may be null) are overwritten.
void layer_norm_forward(const LayerNormAttrs& a, const Tensor& x, const Tensor& scale,
                        const Tensor& bias, Tensor& y);
void layer_norm_backward(const LayerNormAttrs& a, const Tensor& x, const Tensor& scale,
                         const Tensor& dy, Tensor* dx, Tensor* dscale, Tensor* dbias);

// ---- Concat along one axis after the batch (the channels, 1, or another).
void concat_forward(std::int64_t axis, std::span<const Tensor> xs, Tensor& y);
void concat_backward(std::int64_t axis, const Tensor& dy, std::span<Tensor> dxs);

// ---- EmbeddingBag over CSR: bag b is indices[offsets[b] .. offsets[b+1]) (the last bag ends
// at indices.numel()). Sum or mean of the selected rows, optionally weighted per index.
// Throws telar::Error if an index is outside [0, rows) or offsets are not non-decreasing.
void embedding_bag_forward(const EmbeddingBagAttrs& a, const Tensor& indices,
                           const Tensor& offsets, const Tensor& weight,
                           const Tensor* per_sample_weights, Tensor& y);
// Dense gradient of the table (every row; rows never looked up get zero).
void embedding_bag_backward(const EmbeddingBagAttrs& a, const Tensor& indices,
                            const Tensor& offsets, const Tensor* per_sample_weights,
                            const Tensor& dy, Tensor& dweight);

// ---- DLRM dot interaction: S = [dense, emb_1..emb_T] (T+1 vectors of width d per sample);
// y = [dense | S_i . S_j for i > j (i >= j with self_interaction)], pairs in DLRM's order
// (row i ascending, then j ascending).
void dot_interaction_forward(const DotInteractionAttrs& a, std::span<const Tensor> inputs,
                             Tensor& y);
void dot_interaction_backward(const DotInteractionAttrs& a, std::span<const Tensor> inputs,
                              const Tensor& dy, std::span<Tensor> dinputs);

// ---- Losses (mean over the batch). Each returns the loss and, if the gradient pointer is
// non-null, writes d(loss)/d(first input) scaled by `scale` (the upstream gradient).
float cross_entropy_with_logits(const Tensor& logits, const Tensor& labels, Tensor* dlogits,
                                float scale = 1.0f);
float bce_with_logits(const Tensor& logits, const Tensor& targets, Tensor* dlogits,
                      float scale = 1.0f);
// MSE = mean over all elements of (prediction - target)^2; target is f32 of the same shape,
// or i64 labels [B] compared as one-hot rows of prediction's width.
float mse(const Tensor& prediction, const Tensor& target, Tensor* dprediction, float scale = 1.0f);

}  // namespace telar::ops
