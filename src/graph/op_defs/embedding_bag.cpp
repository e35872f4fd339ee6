// EmbeddingBag: indices[nnz] i64, offsets[B] i64 (start of each bag), weight[rows,dim],
// per_sample_weights[nnz] f32 (optional) -> [B,dim].
#include <fmt/format.h>

#include <cmath>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  const auto& a = c.attr<EmbeddingBagAttrs>();
  c.arity(a.per_sample_weights ? 4 : 3, a.per_sample_weights ? 4 : 3);
  c.dtype(0, DType::I64);
  c.dtype(1, DType::I64);
  c.rank(0, 1, "indices");
  c.rank(1, 1, "offsets, one per bag");
  if (a.num_embeddings <= 0 || a.dim <= 0) c.bad("table size and dim must be positive");
  c.shape_is(2, {a.num_embeddings, a.dim});
  if (a.per_sample_weights) c.dtype(3, DType::F32);
  return {{c.in(1).shape[0], a.dim}, DType::F32};
}

void cost(const Graph&, const Node& n, const CostOptions& o, NodeCost& c) {
  const auto& a = n.attr<EmbeddingBagAttrs>();
  const auto rows = static_cast<std::int64_t>(std::llround(o.indices_per_bag * o.batch));
  c.macs = rows * a.dim;
  // Only the rows looked up are read, not the whole table.
  c.param_bytes = rows * a.dim * 4;
  c.input_bytes = rows * 8 + o.batch * 8;
}

std::string describe(const Node& n) {
  const auto& a = n.attr<EmbeddingBagAttrs>();
  return fmt::format("{}x{} {}", a.num_embeddings, a.dim, mode_name(a.mode));
}

}  // namespace

const OpDef kEmbeddingBag{
    "EmbeddingBag", KernelFamily::EmbeddingBag, infer, cost, describe, Lowering::SparseDense};

}  // namespace telar::graph::op_defs
