#pragma once
// The inference passes, each a function from a graph and its weights to a new graph and
// weights that compute the same outputs in evaluation mode (within float rounding). They run
// when a model is compiled for inference (inference.hpp), never on a training graph.
#include "optimize/rewriter.hpp"

namespace telar::optimize {

// Dropout is the identity in evaluation mode: its readers read its input.
Rewritten remove_dropout(const graph::Graph& graph, const graph::ParameterSet& params);

// A BatchNorm2d whose input is a Conv2d's output read by nothing else becomes part of the
// convolution: with s = gamma / sqrt(running_var + eps) per output channel,
// weight' = weight * s and bias' = (bias - running_mean) * s + beta (the Conv2d gains a bias).
// The convolution's weights must be its own (read by no other node).
Rewritten fold_batchnorm(const graph::Graph& graph, const graph::ParameterSet& params);

// An Add of two Conv2d outputs, each read by it alone, where the later Conv2d's inputs all
// exist before the earlier one's last input is made (a projection shortcut: ResNet's
// downsampling 1x1 convolution of the block's input) has the later one scheduled just before
// the earlier one (the main path's last convolution). Only the order changes: fuse_residual_add
// then gives the sum to the main path's convolution, so the block's output takes the layout of the
// main path's kernels, which the next block's convolutions read (on the CPU: Winograd's blocked
// layout, without the reorders a shortcut's channels-last output would need there).
Rewritten schedule_shortcuts_first(const graph::Graph& graph, const graph::ParameterSet& params);

// An Add of two same-shape values, one the output of a Conv2d without post-ops and read by
// nothing else, becomes that Conv2d's sum post-op (the residual connection of ResNet and
// MobileNetV2): the other operand is the summand, which the convolution's output overwrites,
// so it must be an activation computed before the convolution, read by nothing after it and
// no relabelling's view (not an input, a weight or a graph output). Where both operands
// qualify, the later Conv2d takes the sum.
Rewritten fuse_residual_add(const graph::Graph& graph, const graph::ParameterSet& params);

// An Add of a vector of out_features weights to the output of a Linear without a bias, which
// only the Add reads, becomes the Linear's bias (how PyTorch exports nn.Linear over the tokens
// of a transformer, [B, L, in]: MatMul, then Add): added inside the matmul, and the Linear's
// activation after it can then be fused too.
Rewritten fold_bias_add(const graph::Graph& graph, const graph::ParameterSet& params);

// A Mul of a Linear's output by a weight of one factor per output feature (broadcast along the
// features' axis only), the product read by the Mul alone, directly or through a Transpose read
// by it alone (ConvNeXt's layer scale, gamma[C, 1, 1] times the block's Linear transposed back to
// NCHW), becomes part of the Linear: weight'[o, :] = weight[o, :] * s[o], bias'[o] = bias[o] *
// s[o]. The Linear has no post-ops and its weights are its own (read by no other node).
Rewritten fold_scale_into_linear(const graph::Graph& graph, const graph::ParameterSet& params);

// A Pad whose only reader is a pooling without padding of its own becomes the pooling's padding,
// which oneDNN's pooling applies itself: no copy of the input, and no conversion of it to the
// plain layout Pad's reference kernel reads. A Pad of -inf at the bottom and right in front of a
// MaxPool2d (ONNX's ceil_mode as import writes it: GoogLeNet, Inception) becomes its end padding
// (Pool2dAttrs::end_pad); a symmetric Pad of zeros in front of an AvgPool2d (PyTorch's
// avg_pool2d with padding, which it exports as Pad and AveragePool: Inception-v3) its padding,
// counted in the divisor.
Rewritten fold_pad_into_pool(const graph::Graph& graph, const graph::ParameterSet& params);

// x times a gate computed from x alone, read by nothing else, becomes one activation: x *
// Sigmoid(x) (how PyTorch exports SiLU, EfficientNet's swish) is SiLU, and x * HardSigmoid(x)
// with PyTorch's 1/6 and 1/2 (hardswish before opset 14) is HardSwish; fuse_activation then
// gives either to the convolution before it.
Rewritten fuse_gated_activation(const graph::Graph& graph, const graph::ParameterSet& params);

// GELU as PyTorch exports it, Mul(Mul(x, Add(Erf(Div(x, sqrt(2))), 1)), 0.5) (either operand
// order of the Add and the Muls; the inner four results read by nothing else), becomes one GELU
// activation (one oneDNN eltwise on the CPU, where the five ran as four binaries and a
// scalar libm Erf), which fuse_activation then gives to the convolution or Linear before it.
Rewritten fuse_gelu(const graph::Graph& graph, const graph::ParameterSet& params);

// A layer norm over the last axis as PyTorch exports it before opset 17, nine ops
// (ReduceMean, Sub, Pow by 2 (imported as a Mul of the value by itself), ReduceMean, Add of
// epsilon, Sqrt, Div, Mul by the scale, Add of the bias; the inner results read inside it
// alone), becomes one LayerNorm: one pass over each row where the nine made nine passes over
// the tensor. Not on CUDA, which has no LayerNorm kernel (a fusion pass).
Rewritten fuse_layer_norm(const graph::Graph& graph, const graph::ParameterSet& params);

// A fusible activation (graph::fusible_activation) whose input is the output of a Conv2d or
// Linear without an activation, read by nothing else, becomes that node's activation post-op
// (after its sum, if it has one); so does a ReLU after a BatchNorm2d that no convolution took
// (DenseNet's BatchNorm-ReLU before each convolution).
Rewritten fuse_activation(const graph::Graph& graph, const graph::ParameterSet& params);

}  // namespace telar::optimize
