#include "graph/op.hpp"

#include "core/enum_names.hpp"
#include "graph/op_def.hpp"

namespace telar::graph {

std::string_view op_name(OpKind kind) { return op_def(kind).name; }
bool op_is_loss(OpKind kind) { return op_def(kind).loss; }

bool fusible_activation(OpKind kind) {
  switch (kind) {
    case OpKind::ReLU:
    case OpKind::ReLU6:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::LeakyReLU:
    case OpKind::HardSwish:
    case OpKind::SiLU:
    case OpKind::GELU:
      return true;
    default: return false;
  }
}

std::string_view mode_name(EmbeddingBagMode mode) {
  static constexpr EnumNames<EmbeddingBagMode, EmbeddingBagMode::Mean> kNames{{"sum", "mean"}};
  return kNames(mode);
}

std::string_view mode_name(ResizeMode mode) {
  static constexpr EnumNames<ResizeMode, ResizeMode::Linear> kNames{{"nearest", "linear"}};
  return kNames(mode);
}

}  // namespace telar::graph
