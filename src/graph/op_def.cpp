#include "graph/op_def.hpp"

#include <iterator>

#include "core/error.hpp"
#include "graph/op_defs/op_defs.hpp"

namespace telar::graph {

namespace {

struct Entry {
  OpKind kind;
  const OpDef* def;
};

// One entry per OpKind, in the enum's order (checked below).
constexpr Entry kTable[] = {
    {OpKind::Linear, &op_defs::kLinear},
    {OpKind::Conv2d, &op_defs::kConv2d},
    {OpKind::ConvTranspose2d, &op_defs::kConvTranspose2d},
    {OpKind::BatchNorm2d, &op_defs::kBatchNorm2d},
    {OpKind::LayerNorm, &op_defs::kLayerNorm},
    {OpKind::ReLU, &op_defs::kReLU},
    {OpKind::ReLU6, &op_defs::kReLU6},
    {OpKind::Sigmoid, &op_defs::kSigmoid},
    {OpKind::Tanh, &op_defs::kTanh},
    {OpKind::LeakyReLU, &op_defs::kLeakyReLU},
    {OpKind::HardSigmoid, &op_defs::kHardSigmoid},
    {OpKind::HardSwish, &op_defs::kHardSwish},
    {OpKind::SiLU, &op_defs::kSiLU},
    {OpKind::GELU, &op_defs::kGELU},
    {OpKind::Sqrt, &op_defs::kSqrt},
    {OpKind::Erf, &op_defs::kErf},
    {OpKind::Pow, &op_defs::kPow},
    {OpKind::Softmax, &op_defs::kSoftmax},
    {OpKind::MatMul, &op_defs::kMatMul},
    {OpKind::MaxPool2d, &op_defs::kMaxPool2d},
    {OpKind::AvgPool2d, &op_defs::kAvgPool2d},
    {OpKind::GlobalAvgPool, &op_defs::kGlobalAvgPool},
    {OpKind::Flatten, &op_defs::kFlatten},
    {OpKind::Dropout, &op_defs::kDropout},
    {OpKind::Add, &op_defs::kAdd},
    {OpKind::Sub, &op_defs::kSub},
    {OpKind::Mul, &op_defs::kMul},
    {OpKind::Div, &op_defs::kDiv},
    {OpKind::Concat, &op_defs::kConcat},
    {OpKind::Expand, &op_defs::kExpand},
    {OpKind::Reshape, &op_defs::kReshape},
    {OpKind::Transpose, &op_defs::kTranspose},
    {OpKind::Slice, &op_defs::kSlice},
    {OpKind::Pad, &op_defs::kPad},
    {OpKind::Resize, &op_defs::kResize},
    {OpKind::ReduceMean, &op_defs::kReduceMean},
    {OpKind::EmbeddingBag, &op_defs::kEmbeddingBag},
    {OpKind::DotInteraction, &op_defs::kDotInteraction},
    {OpKind::CrossEntropy, &op_defs::kCrossEntropy},
    {OpKind::BCEWithLogits, &op_defs::kBCEWithLogits},
    {OpKind::MSE, &op_defs::kMSE},
};

constexpr bool lists_every_op_kind() {
  if (std::size(kTable) != kOpKindCount) return false;
  for (std::size_t i = 0; i < std::size(kTable); ++i)
    if (static_cast<std::size_t>(kTable[i].kind) != i) return false;
  return true;
}
static_assert(lists_every_op_kind(),
              "every OpKind needs its definition in the op table, in OpKind's order");

}  // namespace

namespace op_defs {

ChannelFlow per_channel(const Graph&, const Node&) { return ChannelFlow::PerChannel; }

}  // namespace op_defs

ChannelFlow channel_flow(const Graph& graph, const Node& node) {
  const OpDef& def = op_def(node.kind);
  return def.channels ? def.channels(graph, node) : ChannelFlow::Opaque;
}

const OpDef& op_def(OpKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  require(i < std::size(kTable), "internal: op kind {} is not an op", i);
  return *kTable[i].def;
}

}  // namespace telar::graph
