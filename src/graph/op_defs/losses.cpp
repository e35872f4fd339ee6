// Losses, each a scalar mean over the batch:
//   CrossEntropy   logits[B,C] f32, labels[B] i64
//   BCEWithLogits  logits[B,1] f32, targets[B,1] f32
//   MSE            prediction[B,...] f32, target (same shape f32, or labels[B] i64 one-hot)
#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

void labels_of_classes(const ShapeCheck& c) {
  c.rank(0, 2, "batch x classes");
  c.dtype(1, DType::I64);
  c.rank(1, 1, "labels");
}

void targets_like_prediction(const ShapeCheck& c) {
  c.dtype(1, DType::F32);
  c.shape_is(1, c.in(0).shape);
}

InferredValue infer_cross_entropy(const ShapeCheck& c) {
  c.arity(2, 2);
  labels_of_classes(c);
  return {{}, DType::F32};
}

InferredValue infer_bce(const ShapeCheck& c) {
  c.arity(2, 2);
  targets_like_prediction(c);
  return {{}, DType::F32};
}

InferredValue infer_mse(const ShapeCheck& c) {
  c.arity(2, 2);
  if (c.attr<MseAttrs>().one_hot_labels)
    labels_of_classes(c);
  else
    targets_like_prediction(c);
  return {{}, DType::F32};
}

// One operation per prediction element.
void cost(const Graph& g, const Node& n, const CostOptions& o, NodeCost& c) {
  c.macs = numel_at(g, n.inputs.at(0), o.batch);
}

}  // namespace

const OpDef kCrossEntropy{
    "CrossEntropy", KernelFamily::Loss, infer_cross_entropy, cost, nullptr, Lowering::Host, true};
const OpDef kBCEWithLogits{
    "BCEWithLogits", KernelFamily::Loss, infer_bce, cost, nullptr, Lowering::Host, true};
const OpDef kMSE{"MSE", KernelFamily::Loss, infer_mse, cost, nullptr, Lowering::Host, true};

}  // namespace telar::graph::op_defs
