#include "graph/op_defs/op_defs.hpp"
#include "graph/op_table.hpp"

namespace telar::graph {

namespace {

// One entry per OpKind, in the enum's order.
constexpr OpEntry<OpDef> kTable[] = {
    {OpKind::Linear, &op_defs::kLinear},
    {OpKind::Conv2d, &op_defs::kConv2d},
    {OpKind::BatchNorm2d, &op_defs::kBatchNorm2d},
    {OpKind::ReLU, &op_defs::kReLU},
    {OpKind::ReLU6, &op_defs::kReLU6},
    {OpKind::Sigmoid, &op_defs::kSigmoid},
    {OpKind::Tanh, &op_defs::kTanh},
    {OpKind::Softmax, &op_defs::kSoftmax},
    {OpKind::MaxPool2d, &op_defs::kMaxPool2d},
    {OpKind::AvgPool2d, &op_defs::kAvgPool2d},
    {OpKind::GlobalAvgPool, &op_defs::kGlobalAvgPool},
    {OpKind::Flatten, &op_defs::kFlatten},
    {OpKind::Dropout, &op_defs::kDropout},
    {OpKind::Add, &op_defs::kAdd},
    {OpKind::Concat, &op_defs::kConcat},
    {OpKind::EmbeddingBag, &op_defs::kEmbeddingBag},
    {OpKind::DotInteraction, &op_defs::kDotInteraction},
    {OpKind::CrossEntropy, &op_defs::kCrossEntropy},
    {OpKind::BCEWithLogits, &op_defs::kBCEWithLogits},
    {OpKind::MSE, &op_defs::kMSE},
};

static_assert(lists_every_op_kind(kTable),
              "every OpKind needs its definition in the op table, in OpKind's order");

}  // namespace

const OpDef& op_def(OpKind kind) {
  return op_table_entry(kTable, kind);
}

}  // namespace telar::graph
