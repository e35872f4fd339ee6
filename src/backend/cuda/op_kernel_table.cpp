#include "backend/cuda/ops/op_kernels.hpp"
#include "graph/op_table.hpp"

namespace telar::backend::cuda {

namespace {

using graph::OpKind;
namespace k = op_kernel_defs;

// One entry per OpKind, in the enum's order.
constexpr graph::OpEntry<OpKernels> kTable[] = {
    {OpKind::Linear, &k::kLinear},
    {OpKind::Conv2d, &k::kConv2d},
    {OpKind::BatchNorm2d, &k::kBatchNorm2d},
    {OpKind::ReLU, &k::kActivation},
    {OpKind::ReLU6, &k::kActivation},
    {OpKind::Sigmoid, &k::kActivation},
    {OpKind::Tanh, &k::kActivation},
    {OpKind::Softmax, &k::kSoftmax},
    {OpKind::MaxPool2d, &k::kMaxPool2d},
    {OpKind::AvgPool2d, &k::kAvgPool2d},
    {OpKind::GlobalAvgPool, &k::kGlobalAvgPool},
    {OpKind::Flatten, &k::kFlatten},
    {OpKind::Dropout, &k::kDropout},
    {OpKind::Add, &k::kAdd},
    {OpKind::Concat, &k::kConcat},
    {OpKind::EmbeddingBag, &k::kEmbeddingBag},
    {OpKind::DotInteraction, &k::kDotInteraction},
    {OpKind::CrossEntropy, &k::kLoss},
    {OpKind::BCEWithLogits, &k::kLoss},
    {OpKind::MSE, &k::kLoss},
};

static_assert(graph::lists_every_op_kind(kTable),
              "every OpKind needs its kernel in the CUDA backend's table, in OpKind's order");

}  // namespace

std::unique_ptr<Kernel> make_kernel(KernelIO io) {
  const OpKernels& kernels = graph::op_table_entry(kTable, io.node->kind);
  return kernels.make(std::move(io));
}

}  // namespace telar::backend::cuda
