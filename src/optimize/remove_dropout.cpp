#include "optimize/passes.hpp"

namespace telar::optimize {

Rewritten remove_dropout(const graph::Graph& graph, const graph::ParameterSet& params) {
  GraphRewriter r(graph, params);
  int removed = 0;
  for (const graph::Node& n : graph.nodes()) {
    if (n.kind == graph::OpKind::Dropout) {
      r.redirect(n.outputs.at(0), r.map(n.inputs.at(0)));
      ++removed;
    } else {
      r.copy(n);
    }
  }
  return r.finish(removed);
}

}  // namespace telar::optimize
