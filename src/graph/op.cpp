#include "graph/op.hpp"

#include "graph/op_def.hpp"

namespace telar::graph {

std::string_view op_name(OpKind kind) { return op_def(kind).name; }
bool op_is_loss(OpKind kind) { return op_def(kind).loss; }

std::string_view mode_name(EmbeddingBagMode mode) {
  return mode == EmbeddingBagMode::Sum ? "sum" : "mean";
}

}  // namespace telar::graph
