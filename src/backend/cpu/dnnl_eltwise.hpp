#pragma once
// The activation ops as oneDNN eltwise algorithms: one mapping for the eltwise kernel and for
// the post-ops a Conv2d or Linear runs after its result (graph::PostOps).
#include <optional>

#include "backend/cpu/dnnl_context.hpp"
#include "graph/op.hpp"

namespace telar::backend::cpu {

struct EltwiseAlgorithm {
  dnnl::algorithm algorithm;
  float alpha = 0.0f;
  float beta = 0.0f;
};

// oneDNN's algorithm for an activation op, or nullopt where oneDNN 2.6 has none (HardSigmoid,
// Erf: they run on the reference kernel).
std::optional<EltwiseAlgorithm> dnnl_eltwise(graph::OpKind kind, const graph::EltwiseAttrs& attrs);

// The post-ops' activation, where they have one, appended to `ops`.
void append_activation(dnnl::post_ops& ops, const graph::PostOps& post);

// default_attr() with the post-ops appended: sum (scale 1), then the activation.
dnnl::primitive_attr attr_with_post_ops(const graph::PostOps& post);

}  // namespace telar::backend::cpu
