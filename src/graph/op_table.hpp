#pragma once
// Tables with one entry per OpKind, in the enum's order: the ops' definitions (op_def.hpp) and
// each backend's kernels. A table is a plain array checked at compile time:
//   constexpr OpEntry<OpDef> kTable[] = {{OpKind::Linear, &kLinear}, ...};
//   static_assert(lists_every_op_kind(kTable), "...");
#include <cstddef>

#include "core/error.hpp"
#include "graph/op.hpp"

namespace telar::graph {

template <typename T>
struct OpEntry {
  OpKind kind;
  const T* value;
};

template <typename T, std::size_t N>
constexpr bool lists_every_op_kind(const OpEntry<T> (&table)[N]) {
  if (N != kOpKindCount) return false;
  for (std::size_t i = 0; i < N; ++i)
    if (static_cast<std::size_t>(table[i].kind) != i) return false;
  return true;
}

template <typename T, std::size_t N>
const T& op_table_entry(const OpEntry<T> (&table)[N], OpKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  require(i < N, "internal: op kind {} is not an op", i);
  return *table[i].value;
}

}  // namespace telar::graph
