#include "graph/op.hpp"

namespace telar::graph {

std::string_view op_name(OpKind kind) {
  switch (kind) {
    case OpKind::Linear: return "Linear";
    case OpKind::Conv2d: return "Conv2d";
    case OpKind::BatchNorm2d: return "BatchNorm2d";
    case OpKind::ReLU: return "ReLU";
    case OpKind::ReLU6: return "ReLU6";
    case OpKind::Sigmoid: return "Sigmoid";
    case OpKind::Tanh: return "Tanh";
    case OpKind::Softmax: return "Softmax";
    case OpKind::MaxPool2d: return "MaxPool2d";
    case OpKind::AvgPool2d: return "AvgPool2d";
    case OpKind::GlobalAvgPool: return "GlobalAvgPool";
    case OpKind::Flatten: return "Flatten";
    case OpKind::Dropout: return "Dropout";
    case OpKind::Add: return "Add";
    case OpKind::Concat: return "Concat";
    case OpKind::EmbeddingBag: return "EmbeddingBag";
    case OpKind::DotInteraction: return "DotInteraction";
    case OpKind::CrossEntropy: return "CrossEntropy";
    case OpKind::BCEWithLogits: return "BCEWithLogits";
    case OpKind::MSE: return "MSE";
  }
  return "?";
}

bool op_is_loss(OpKind kind) {
  return kind == OpKind::CrossEntropy || kind == OpKind::BCEWithLogits || kind == OpKind::MSE;
}

}  // namespace telar::graph
