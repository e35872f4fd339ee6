// Transpose: x -> y with y's dimension d taken from x's dimension perm[d]; the batch stays first.
#include <fmt/format.h>

#include <algorithm>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  c.arity(1, 1);
  const auto& perm = c.attr<TransposeAttrs>().perm;
  const auto& x = c.in(0).shape;
  if (perm.size() != x.size())
    c.bad(fmt::format("the permutation has {} entries for an input of rank {}", perm.size(),
                      x.size()));
  std::vector<bool> seen(x.size(), false);
  for (auto p : perm) {
    if (p < 0 || p >= static_cast<std::int64_t>(x.size()) || seen[static_cast<std::size_t>(p)])
      c.bad(fmt::format("[{}] is not a permutation of 0..{}", fmt::join(perm, ", "),
                        x.size() - 1));
    seen[static_cast<std::size_t>(p)] = true;
  }
  if (perm[0] != 0) c.bad("the batch dimension must stay first (perm[0] = 0)");
  Shape out;
  for (auto p : perm) out.push_back(x[static_cast<std::size_t>(p)]);
  return {out, c.in(0).dtype};
}

std::string describe(const Node& n) {
  return fmt::format("perm {}", fmt::join(n.attr<TransposeAttrs>().perm, ","));
}

}  // namespace

const OpDef kTranspose{"Transpose", KernelFamily::Transpose, infer, nullptr, describe};

}  // namespace telar::graph::op_defs
