#pragma once
// The op kinds of the IR and their attributes (one plain struct per op).
//
// Input conventions (value order in Node::inputs):
//   Linear          x[B,in], weight[out,in], bias[out] (optional)
//   Conv2d          x[B,C,H,W], weight[O,C/groups,kh,kw], bias[O] (optional)
//   BatchNorm2d     x[B,C,H,W], gamma[C], beta[C], running_mean[C], running_var[C]
//   ReLU ReLU6 Sigmoid Tanh Dropout   x (any shape)
//   Softmax         x[B,N] (over axis 1)
//   MaxPool2d AvgPool2d  x[B,C,H,W]; GlobalAvgPool x[B,C,H,W] -> [B,C]
//   Flatten         x[B,...] -> [B, prod(...)]
//   Add             a, b (same shape)
//   Concat          x1..xn (same shape except axis 1)
//   EmbeddingBag    indices[nnz] i64, offsets[B] i64 (start of each bag), weight[rows,dim],
//                   per_sample_weights[nnz] f32 (optional) -> [B,dim]
//   DotInteraction  dense[B,d], emb_1[B,d] .. emb_T[B,d] -> [B, d + pairs]
//   CrossEntropy    logits[B,C] f32, labels[B] i64 -> scalar (mean over the batch)
//   BCEWithLogits   logits[B,1] f32, targets[B,1] f32 -> scalar (mean)
//   MSE             prediction[B,...] f32, target (same shape f32, or labels[B] i64 one-hot)
#include <cstdint>
#include <string_view>
#include <variant>

namespace telar::graph {

enum class OpKind : std::uint8_t {
  Linear,
  Conv2d,
  BatchNorm2d,
  ReLU,
  ReLU6,
  Sigmoid,
  Tanh,
  Softmax,
  MaxPool2d,
  AvgPool2d,
  GlobalAvgPool,
  Flatten,
  Dropout,
  Add,
  Concat,
  EmbeddingBag,
  DotInteraction,
  CrossEntropy,
  BCEWithLogits,
  MSE,
};

std::string_view op_name(OpKind kind);
bool op_is_loss(OpKind kind);

struct LinearAttrs {
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
  bool bias = true;
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
};

struct BatchNormAttrs {
  std::int64_t channels = 0;
  float eps = 1e-5f;
  float momentum = 0.1f;  // running = (1 - momentum) * running + momentum * batch
};

struct Pool2dAttrs {
  std::int64_t kernel_h = 2, kernel_w = 2;
  std::int64_t stride_h = 2, stride_w = 2;
  std::int64_t pad_h = 0, pad_w = 0;
  // AvgPool2d only: whether padded zeros count in the divisor (PyTorch's default is true).
  bool count_include_pad = true;
};

struct DropoutAttrs {
  float p = 0.5f;
};

struct ConcatAttrs {
  int axis = 1;
};

enum class EmbeddingBagMode : std::uint8_t { Sum, Mean };

struct EmbeddingBagAttrs {
  std::int64_t num_embeddings = 0;
  std::int64_t dim = 0;
  EmbeddingBagMode mode = EmbeddingBagMode::Sum;
  bool per_sample_weights = false;
};

struct DotInteractionAttrs {
  std::int64_t num_sparse = 0;  // T, the number of embedding vectors besides the dense one
  std::int64_t dim = 0;
  bool self_interaction = false;  // include the diagonal (DLRM's --arch-interaction-itself)
};

struct MseAttrs {
  bool one_hot_labels = false;  // target given as class labels i64, compared as one-hot
};

using Attrs = std::variant<std::monostate, LinearAttrs, Conv2dAttrs, BatchNormAttrs, Pool2dAttrs,
                           DropoutAttrs, ConcatAttrs, EmbeddingBagAttrs, DotInteractionAttrs,
                           MseAttrs>;

// Number of (i, j) pairs the interaction keeps for T+1 vectors.
constexpr std::int64_t interaction_pairs(std::int64_t num_sparse, bool self_interaction) {
  const std::int64_t n = num_sparse + 1;
  return self_interaction ? n * (n + 1) / 2 : n * (n - 1) / 2;
}

}  // namespace telar::graph
