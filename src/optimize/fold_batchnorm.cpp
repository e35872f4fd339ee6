#include <cmath>
#include <map>

#include "optimize/passes.hpp"

namespace telar::optimize {

namespace {

using graph::NodeId;
using graph::OpKind;

// The BatchNorm2d folded into each Conv2d, by the Conv2d's id.
std::map<NodeId, NodeId> foldable(const graph::Graph& g, const graph::ParameterSet& params) {
  std::map<NodeId, NodeId> out;
  for (const graph::Node& bn : g.nodes()) {
    if (bn.kind != OpKind::BatchNorm2d || bn.attr<graph::BatchNormAttrs>().post.any()) continue;
    const graph::Value& x = g.value(bn.inputs.at(0));
    if (x.producer < 0 || !read_only_by_one(g, x.id)) continue;
    const graph::Node& conv = g.node(x.producer);
    if (conv.kind != OpKind::Conv2d || conv.attr<graph::Conv2dAttrs>().post.any()) continue;
    bool own_weights = true;
    for (std::size_t i = 1; i < conv.inputs.size(); ++i)
      own_weights = own_weights && g.value(conv.inputs[i]).kind == graph::ValueKind::Parameter &&
                    params.has(conv.inputs[i]) && g.consumers(conv.inputs[i]).size() == 1;
    for (std::size_t i = 1; i < bn.inputs.size(); ++i)
      own_weights = own_weights && params.has(bn.inputs[i]);
    if (own_weights) out[conv.id] = bn.id;
  }
  return out;
}

}  // namespace

Rewritten fold_batchnorm(const graph::Graph& graph, const graph::ParameterSet& params) {
  return fuse_pairs(
      graph, params, foldable(graph, params),
      [&](GraphRewriter& r, const graph::Node& conv, const graph::Node& bn) {
        graph::Conv2dAttrs a = conv.attr<graph::Conv2dAttrs>();
        const float eps = bn.attr<graph::BatchNormAttrs>().eps;
        const Tensor& w = params.at(conv.inputs[1]);
        const float* gamma = params.at(bn.inputs[1]).f32();
        const float* beta = params.at(bn.inputs[2]).f32();
        const float* mean = params.at(bn.inputs[3]).f32();
        const float* var = params.at(bn.inputs[4]).f32();
        const float* bias = a.bias ? params.at(conv.inputs[2]).f32() : nullptr;
        Tensor w2(w.shape());
        Tensor b2(Shape{a.out_channels});
        const std::int64_t per_channel = w.numel() / a.out_channels;
        for (std::int64_t o = 0; o < a.out_channels; ++o) {
          const double s =
              static_cast<double>(gamma[o]) / std::sqrt(static_cast<double>(var[o]) + eps);
          for (std::int64_t k = 0; k < per_channel; ++k)
            w2.f32()[o * per_channel + k] = static_cast<float>(w.f32()[o * per_channel + k] * s);
          b2.f32()[o] = static_cast<float>(((bias ? bias[o] : 0.0) - mean[o]) * s + beta[o]);
        }
        a.bias = true;
        return r.add(
            OpKind::Conv2d, conv.name, a,
            {r.map(conv.inputs[0]), r.add_parameter(conv.name + ".folded_weight", std::move(w2)),
             r.add_parameter(conv.name + ".folded_bias", std::move(b2))});
      });
}

}  // namespace telar::optimize
