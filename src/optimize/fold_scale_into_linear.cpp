#include <algorithm>
#include <map>
#include <optional>

#include "optimize/passes.hpp"

namespace telar::optimize {

namespace {

using graph::NodeId;
using graph::OpKind;
using graph::ValueId;

// A Mul that scales a Linear's output features, directly or through a Transpose.
struct Scaled {
  NodeId linear = -1;
  NodeId transpose = -1;  // -1: none
  ValueId scale = graph::kNoValue;
};

// Whether `scale`, broadcast against `shape` (NumPy's rules), is a weight of `features` values
// along axis `axis` of it and 1 along every other: one factor per output feature of the Linear.
bool scales_axis(const graph::Graph& g, const graph::ParameterSet& params, ValueId scale,
                 const Shape& shape, std::size_t axis, std::int64_t features) {
  const graph::Value& s = g.value(scale);
  if ((s.kind != graph::ValueKind::Parameter && s.kind != graph::ValueKind::Buffer) ||
      !params.has(scale) || s.shape.size() > shape.size() || shape_numel(s.shape) != features)
    return false;
  const std::size_t offset = shape.size() - s.shape.size();  // s's axis k is shape's k + offset
  for (std::size_t k = 0; k < s.shape.size(); ++k)
    if (s.shape[k] != (k + offset == axis ? features : 1)) return false;
  return offset <= axis;
}

// The Linear whose output the Mul `mul` scales per feature, if it does: the Linear (without
// post-ops, its weights its own) read by the Mul alone, or by a Transpose read by the Mul alone.
std::optional<Scaled> scaled_linear(const graph::Graph& g, const graph::ParameterSet& params,
                                    const graph::Node& mul) {
  if (mul.kind != OpKind::Mul) return {};
  for (std::size_t i = 0; i < 2; ++i) {
    Scaled out;
    out.scale = mul.inputs[1 - i];
    ValueId v = mul.inputs[i];
    const Shape& shape = g.value(mul.outputs.at(0)).shape;
    if (g.value(v).shape != shape) continue;  // the scale must not broadcast the product
    std::size_t axis = shape.size() - 1;      // the features' axis in the Mul's output
    if (const graph::Node* t = sole_producer(g, v, OpKind::Transpose)) {
      const auto& perm = t->attr<graph::TransposeAttrs>().perm;
      const auto last = static_cast<std::int64_t>(perm.size()) - 1;
      axis = static_cast<std::size_t>(std::find(perm.begin(), perm.end(), last) - perm.begin());
      out.transpose = t->id;
      v = t->inputs.at(0);
    }
    const graph::Node* linear = sole_producer(g, v, OpKind::Linear);
    if (!linear) continue;
    const auto& a = linear->attr<graph::LinearAttrs>();
    bool own_weights = !a.post.any();
    for (std::size_t k = 1; k < linear->inputs.size(); ++k)
      own_weights = own_weights && params.has(linear->inputs[k]) &&
                    g.consumers(linear->inputs[k]).size() == 1;
    if (!own_weights || !scales_axis(g, params, out.scale, shape, axis, a.out_features)) continue;
    out.linear = linear->id;
    return out;
  }
  return {};
}

}  // namespace

Rewritten fold_scale_into_linear(const graph::Graph& graph, const graph::ParameterSet& params) {
  std::map<NodeId, NodeId> scaled_by;  // each Linear folded, with its Mul
  std::map<NodeId, Scaled> folds;      // by the Mul
  for (const graph::Node& n : graph.nodes())
    if (std::optional<Scaled> s = scaled_linear(graph, params, n)) {
      scaled_by[s->linear] = n.id;
      folds.emplace(n.id, *s);
    }
  GraphRewriter r(graph, params);
  for (const graph::Node& n : graph.nodes()) {
    if (const auto mul = folds.find(n.id); mul != folds.end()) {
      // The Linear (or the Transpose after it) already computes the scaled product.
      const graph::Node& last =
          graph.node(mul->second.transpose >= 0 ? mul->second.transpose : mul->second.linear);
      r.redirect(n.outputs.at(0), r.map(last.outputs.at(0)));
      continue;
    }
    const auto fold = scaled_by.find(n.id);
    if (fold == scaled_by.end()) {
      r.copy(n);
      continue;
    }
    // weight'[o, :] = weight[o, :] * s[o], bias'[o] = bias[o] * s[o].
    const auto& a = n.attr<graph::LinearAttrs>();
    const float* s = params.at(folds.at(fold->second).scale).f32();
    const Tensor& w = params.at(n.inputs.at(1));
    Tensor w2(w.shape());
    for (std::int64_t o = 0; o < a.out_features; ++o)
      for (std::int64_t k = 0; k < a.in_features; ++k)
        w2.f32()[o * a.in_features + k] = w.f32()[o * a.in_features + k] * s[o];
    std::vector<ValueId> inputs{r.map(n.inputs.at(0)),
                                r.add_parameter(n.name + ".scaled_weight", std::move(w2))};
    if (a.bias) {
      const Tensor& b = params.at(n.inputs.at(2));
      Tensor b2(b.shape());
      for (std::int64_t o = 0; o < a.out_features; ++o) b2.f32()[o] = b.f32()[o] * s[o];
      inputs.push_back(r.add_parameter(n.name + ".scaled_bias", std::move(b2)));
    }
    r.redirect(n.outputs.at(0), r.add(OpKind::Linear, n.name, a, std::move(inputs)));
  }
  return r.finish(static_cast<int>(folds.size()));
}

}  // namespace telar::optimize
