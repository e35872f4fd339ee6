#pragma once
// The definition of every op, one per file in this folder; op_def.cpp indexes them by OpKind.
#include "graph/op_def.hpp"

namespace telar::graph::op_defs {

// The cost of a relabelling (Flatten, Reshape): no arithmetic and no bytes moved.
void relabelling_cost(const Graph& graph, const Node& node, const CostOptions& options,
                      NodeCost& cost);

// A Conv2d's or Linear's post-ops (graph/op.hpp): checks the summand, the last of `arity`
// inputs when post.sum, against the output shape and the activation; describes them for dump().
void check_post_ops(const ShapeCheck& check, const PostOps& post, std::size_t arity,
                    const Shape& output);
std::string describe_post_ops(const PostOps& post);

// A convolution's input and window (Conv2d, ConvTranspose2d): input 0 is [B, in, H, W]; groups
// divide `in` and `out`; kernel, stride and dilation of `window` positive, its padding not
// negative.
void check_convolution(const ShapeCheck& check, std::int64_t in, std::int64_t out,
                       const Conv2dAttrs& window);

// ChannelFlow::PerChannel whatever the node, for the ops that never mix channels.
ChannelFlow per_channel(const Graph& graph, const Node& node);

extern const OpDef kLinear;
extern const OpDef kConv2d;
extern const OpDef kConvTranspose2d;
extern const OpDef kBatchNorm2d;
extern const OpDef kLayerNorm;
extern const OpDef kReLU;
extern const OpDef kReLU6;
extern const OpDef kSigmoid;
extern const OpDef kTanh;
extern const OpDef kLeakyReLU;
extern const OpDef kHardSigmoid;
extern const OpDef kHardSwish;
extern const OpDef kSiLU;
extern const OpDef kGELU;
extern const OpDef kSqrt;
extern const OpDef kErf;
extern const OpDef kPow;
extern const OpDef kSoftmax;
extern const OpDef kMatMul;
extern const OpDef kMaxPool2d;
extern const OpDef kAvgPool2d;
extern const OpDef kGlobalAvgPool;
extern const OpDef kFlatten;
extern const OpDef kDropout;
extern const OpDef kAdd;
extern const OpDef kSub;
extern const OpDef kMul;
extern const OpDef kDiv;
extern const OpDef kConcat;
extern const OpDef kExpand;
extern const OpDef kReshape;
extern const OpDef kTranspose;
extern const OpDef kSlice;
extern const OpDef kPad;
extern const OpDef kResize;
extern const OpDef kReduceMean;
extern const OpDef kEmbeddingBag;
extern const OpDef kDotInteraction;
extern const OpDef kCrossEntropy;
extern const OpDef kBCEWithLogits;
extern const OpDef kMSE;

}  // namespace telar::graph::op_defs
