// DotInteraction: dense[B,d], emb_1[B,d] .. emb_T[B,d] -> [B, d + pairs] (DLRM's interaction).
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  const auto& a = c.attr<DotInteractionAttrs>();
  const auto vectors = static_cast<std::size_t>(a.num_sparse) + 1;
  c.arity(vectors, vectors);
  for (std::size_t i = 0; i < c.count(); ++i) {
    c.rank(i, 2, "batch x dim");
    if (c.in(i).shape[1] != a.dim)
      c.bad(
          fmt::format("input '{}' has width {}, expected the interaction dim {} (the "
                      "embedding width must equal the last bottom-MLP width)",
                      c.in(i).name, c.in(i).shape[1], a.dim));
  }
  return {{c.in(0).shape[0], a.dim + interaction_pairs(a.num_sparse, a.self_interaction)},
          DType::F32};
}

void cost(const Graph&, const Node& n, const CostOptions& o, NodeCost& c) {
  const auto& a = n.attr<DotInteractionAttrs>();
  c.macs = o.batch * interaction_pairs(a.num_sparse, a.self_interaction) * a.dim;
}

std::string describe(const Node& n) {
  const auto& a = n.attr<DotInteractionAttrs>();
  return fmt::format("T={} d={}{}", a.num_sparse, a.dim, a.self_interaction ? " self" : "");
}

}  // namespace

const OpDef kDotInteraction{"DotInteraction", KernelFamily::DotInteraction, infer, cost, describe};

}  // namespace telar::graph::op_defs
