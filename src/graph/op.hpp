#pragma once
// The op kinds of the IR and their attributes (one plain struct per op). Each attribute struct
// lists its fields in fields(), in a fixed order: what tells two nodes of one kind apart
// (the model fingerprint hashes them; a new field must be added there to count).
// Each op's inputs, outputs and checks are in its definition, graph/op_defs/<op>.cpp.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <variant>
#include <vector>

namespace telar::graph {

enum class OpKind : std::uint8_t {
  Linear,
  Conv2d,
  ConvTranspose2d,
  BatchNorm2d,
  LayerNorm,
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
  Pow,
  Softmax,
  MatMul,
  MaxPool2d,
  AvgPool2d,
  GlobalAvgPool,
  Flatten,
  Dropout,
  Add,
  Sub,
  Mul,
  Div,
  Concat,
  Expand,
  Reshape,
  Transpose,
  Slice,
  Pad,
  Resize,
  ReduceMean,
  EmbeddingBag,
  DotInteraction,
  CrossEntropy,
  BCEWithLogits,
  MSE,
  Count,  // the number of kinds; keep last (the op table is checked against it)
};
inline constexpr std::size_t kOpKindCount = static_cast<std::size_t>(OpKind::Count);

// The kernel families: what one backend kernel serves (the activations share one element-wise
// kernel, the losses one). An op's definition names its family; each backend defines one
// kernel set per family, k<Family> in its op_kernel_defs, and builds its table from this list,
// so the list is written once (a backend missing a family fails to link, naming it).
// Binary serves Add, Sub, Mul and Div; Flatten serves every relabelling (Flatten, Reshape).
#define TELAR_KERNEL_FAMILIES(X) \
  X(Linear)                      \
  X(Conv2d)                      \
  X(ConvTranspose2d)             \
  X(BatchNorm2d)                 \
  X(LayerNorm)                   \
  X(Activation)                  \
  X(Softmax)                     \
  X(MatMul)                      \
  X(MaxPool2d)                   \
  X(AvgPool2d)                   \
  X(GlobalAvgPool)               \
  X(Flatten)                     \
  X(Dropout)                     \
  X(Binary)                      \
  X(Concat)                      \
  X(Expand)                      \
  X(Transpose) X(Slice) X(Pad) X(Resize) X(ReduceMean) X(EmbeddingBag) X(DotInteraction) X(Loss)
#define TELAR_KERNEL_FAMILY_ENUMERATOR(family) family,
enum class KernelFamily : std::uint8_t {
  TELAR_KERNEL_FAMILIES(TELAR_KERNEL_FAMILY_ENUMERATOR) Count
};
#undef TELAR_KERNEL_FAMILY_ENUMERATOR
// In a backend's op_kernel_defs: `TELAR_KERNEL_FAMILIES(TELAR_DECLARE_KERNEL_FAMILY)` declares
// its `extern const OpKernels k<Family>;`, one per family.
#define TELAR_DECLARE_KERNEL_FAMILY(family) extern const OpKernels k##family;

// Where a node runs on an accelerator (the sim backend lowers by this).
enum class Lowering : std::uint8_t { Gemm, Conv, SparseDense, Host };

// Shorthands for the op's definition (graph/op_def.hpp).
std::string_view op_name(OpKind kind);
bool op_is_loss(OpKind kind);

// LeakyReLU: y = x < 0 ? alpha * x : x. HardSigmoid: y = clamp(alpha * x + beta, 0, 1).
// Pow: y = x ^ alpha (a constant exponent).
struct EltwiseAttrs {
  float alpha = 0.0f;
  float beta = 0.0f;

  auto fields() const { return std::tie(alpha, beta); }
};

// What a Conv2d or Linear compiled for inference applies to its result (the inference passes
// set it, src/optimize; a model's builder never does): first the sum of its last input (a
// residual Add folded into the Conv2d that produces one of its operands), then an activation
// (one of the activation ops, with its attributes). Training graphs never carry it.
struct PostOps {
  bool sum = false;
  OpKind activation = OpKind::Count;  // Count: none
  EltwiseAttrs eltwise;

  bool any() const { return sum || activation != OpKind::Count; }
  auto fields() const { return std::tie(sum, activation, eltwise.alpha, eltwise.beta); }
};
// The activations a PostOps may carry: those every CPU kernel fuses (ReLU, ReLU6, Sigmoid,
// Tanh, LeakyReLU, HardSwish, SiLU, GELU).
bool fusible_activation(OpKind kind);

struct LinearAttrs {
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
  bool bias = true;
  PostOps post;  // inference only (activation; no sum)

  auto fields() const { return std::tie(in_features, out_features, bias, post); }
};

struct Conv2dAttrs {
  std::int64_t in_channels = 0;
  std::int64_t out_channels = 0;
  std::int64_t kernel_h = 1, kernel_w = 1;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_h = 0, pad_w = 0;
  std::int64_t dilation_h = 1, dilation_w = 1;
  std::int64_t groups = 1;
  bool bias = true;
  PostOps post;  // inference only; with post.sum the summand is the last input

  auto fields() const {
    return std::tie(in_channels, out_channels, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w,
                    dilation_h, dilation_w, groups, bias, post);
  }
};

// ConvTranspose2d (ONNX's ConvTranspose, PyTorch's nn.ConvTranspose2d): the gradient of a
// Conv2d with respect to its input, as a layer. x[B, in, H, W], weight[in, out/groups, kh, kw],
// bias[out]; output (H - 1) * stride - 2 pad + dilation (kh - 1) + output_padding + 1 (each
// output_padding below its stride).
struct ConvTranspose2dAttrs {
  std::int64_t in_channels = 0;
  std::int64_t out_channels = 0;
  std::int64_t kernel_h = 1, kernel_w = 1;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_h = 0, pad_w = 0;
  std::int64_t dilation_h = 1, dilation_w = 1;
  std::int64_t output_padding_h = 0, output_padding_w = 0;
  std::int64_t groups = 1;
  bool bias = true;

  // The Conv2d whose input gradient this layer computes: out -> in channels, the same weight.
  Conv2dAttrs as_conv() const {
    Conv2dAttrs c;
    c.in_channels = out_channels;
    c.out_channels = in_channels;
    c.kernel_h = kernel_h, c.kernel_w = kernel_w;
    c.stride_h = stride_h, c.stride_w = stride_w;
    c.pad_h = pad_h, c.pad_w = pad_w;
    c.dilation_h = dilation_h, c.dilation_w = dilation_w;
    c.groups = groups;
    c.bias = false;
    return c;
  }
  auto fields() const {
    return std::tie(in_channels, out_channels, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w,
                    dilation_h, dilation_w, output_padding_h, output_padding_w, groups, bias);
  }
};

struct BatchNormAttrs {
  std::int64_t channels = 0;
  float eps = 1e-5f;
  float momentum = 0.1f;  // running = (1 - momentum) * running + momentum * batch
  PostOps post;  // inference only: a ReLU (DenseNet's BatchNorm-ReLU before each convolution)

  auto fields() const { return std::tie(channels, eps, momentum, post); }
};

// LayerNorm over the last axis: y = (x - mean) / sqrt(var + eps) * scale + bias, the (biased)
// statistics of each row of `features` elements.
struct LayerNormAttrs {
  std::int64_t features = 0;
  float eps = 1e-5f;

  auto fields() const { return std::tie(features, eps); }
};

// Padding at the bottom and right beyond a window's symmetric padding.
struct EndPadding {
  std::int64_t h = 0, w = 0;

  bool any() const { return h != 0 || w != 0; }
  auto fields() const { return std::tie(h, w); }
};

struct Pool2dAttrs {
  std::int64_t kernel_h = 2, kernel_w = 2;
  std::int64_t stride_h = 2, stride_w = 2;
  std::int64_t pad_h = 0, pad_w = 0;
  // AvgPool2d only: whether padded zeros count in the divisor (PyTorch's default is true).
  bool count_include_pad = true;
  // MaxPool2d in inference graphs only: more padding at the bottom and right than pad_h and
  // pad_w (ONNX's ceil_mode, imported as a Pad of -inf in front; optimize/fold_pad_into_pool).
  EndPadding end_pad;

  auto fields() const {
    return std::tie(kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, count_include_pad,
                    end_pad);
  }
};

// The output's dimensions after the batch (the batch dimension is kept).
struct ReshapeAttrs {
  std::vector<std::int64_t> dims;

  auto fields() const { return std::tie(dims); }
};

// Output dimension d is input dimension perm[d]; perm[0] is 0 (the batch stays first).
struct TransposeAttrs {
  std::vector<std::int64_t> perm;

  auto fields() const { return std::tie(perm); }
};

// A Slice's stride along its axis (ONNX's steps: x[:, :, ::2]). Fingerprints count it only where
// it is not 1, so those of models (and their checkpoints and tables) predating it stay.
struct SliceStep {
  std::int64_t every = 1;

  bool any() const { return every != 1; }
  auto fields() const { return std::tie(every); }
};

// Elements start, start + step, ... below end of one axis (not the batch).
struct SliceAttrs {
  std::int64_t axis = 1;
  std::int64_t start = 0;
  std::int64_t end = 0;
  SliceStep step;

  // How many elements it takes: ceil((end - start) / step).
  std::int64_t count() const { return (end - start + step.every - 1) / step.every; }
  auto fields() const { return std::tie(axis, start, end, step); }
};

// The mean over one axis after the batch, kept as a dimension of size 1.
struct ReduceAttrs {
  std::int64_t axis = 1;

  auto fields() const { return std::tie(axis); }
};

// Constant padding of the two spatial axes of an NCHW tensor, each side on its own.
struct PadAttrs {
  std::int64_t top = 0, left = 0, bottom = 0, right = 0;
  float value = 0.0f;  // -inf pads a max pooling's input

  auto fields() const { return std::tie(top, left, bottom, right, value); }
};

// Resize of the two spatial axes of an NCHW tensor to out_h x out_w, as PyTorch's
// F.interpolate (ONNX's Resize) computes it. Output pixel o of an axis of `in` pixels reads the
// input at coordinate s: Linear, s = (o + 0.5) * in / out - 0.5 clamped at 0 (half pixels,
// align_corners=False), or s = o * (in - 1) / (out - 1) with align_corners, interpolating
// between floor(s) and the next pixel (the last pixel repeated past the edge); Nearest, pixel
// floor(o * in / out) (PyTorch's "nearest").
enum class ResizeMode : std::uint8_t { Nearest, Linear };
std::string_view mode_name(ResizeMode mode);  // "nearest", "linear"

struct ResizeAttrs {
  ResizeMode mode = ResizeMode::Linear;
  bool align_corners = false;  // Linear only
  std::int64_t out_h = 1, out_w = 1;

  auto fields() const { return std::tie(mode, align_corners, out_h, out_w); }
};

struct DropoutAttrs {
  float p = 0.5f;

  auto fields() const { return std::tie(p); }
};

struct ConcatAttrs {
  int axis = 1;

  auto fields() const { return std::tie(axis); }
};

enum class EmbeddingBagMode : std::uint8_t { Sum, Mean };
std::string_view mode_name(EmbeddingBagMode mode);  // "sum", "mean"

struct EmbeddingBagAttrs {
  std::int64_t num_embeddings = 0;
  std::int64_t dim = 0;
  EmbeddingBagMode mode = EmbeddingBagMode::Sum;
  bool per_sample_weights = false;

  auto fields() const { return std::tie(num_embeddings, dim, mode, per_sample_weights); }
};

struct DotInteractionAttrs {
  std::int64_t num_sparse = 0;  // T, the number of embedding vectors besides the dense one
  std::int64_t dim = 0;
  bool self_interaction = false;  // include the diagonal (DLRM's --arch-interaction-itself)

  auto fields() const { return std::tie(num_sparse, dim, self_interaction); }
};

struct MseAttrs {
  bool one_hot_labels = false;  // target given as class labels i64, compared as one-hot

  auto fields() const { return std::tie(one_hot_labels); }
};

using Attrs =
    std::variant<std::monostate, LinearAttrs, Conv2dAttrs, ConvTranspose2dAttrs, BatchNormAttrs,
                 LayerNormAttrs, Pool2dAttrs, EltwiseAttrs, ReshapeAttrs, TransposeAttrs,
                 SliceAttrs, PadAttrs, ResizeAttrs, ReduceAttrs, DropoutAttrs, ConcatAttrs,
                 EmbeddingBagAttrs, DotInteractionAttrs, MseAttrs>;

// Number of (i, j) pairs the interaction keeps for T+1 vectors.
constexpr std::int64_t interaction_pairs(std::int64_t num_sparse, bool self_interaction) {
  const std::int64_t n = num_sparse + 1;
  return self_interaction ? n * (n + 1) / 2 : n * (n - 1) / 2;
}

}  // namespace telar::graph
