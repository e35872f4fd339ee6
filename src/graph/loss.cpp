#include "graph/loss.hpp"

#include "core/error.hpp"

namespace telar::graph {

LossKind parse_loss(const std::string& name) {
  if (name == "cross_entropy") return LossKind::CrossEntropy;
  if (name == "bce") return LossKind::BCEWithLogits;
  if (name == "mse") return LossKind::MSE;
  if (name == "softmax_mse") return LossKind::SoftmaxMSE;
  fail("unknown loss '{}'; use cross_entropy, bce, mse or softmax_mse", name);
}

std::string loss_name(LossKind kind) {
  switch (kind) {
    case LossKind::CrossEntropy: return "cross_entropy";
    case LossKind::BCEWithLogits: return "bce";
    case LossKind::MSE: return "mse";
    case LossKind::SoftmaxMSE: return "softmax_mse";
  }
  return "?";
}

Graph with_loss(const Graph& model, LossKind kind) {
  require(model.outputs().size() == 1, "model '{}' has {} outputs; a loss needs exactly one",
          model.name(), model.outputs().size());
  Graph g = model;
  const ValueId out = model.outputs()[0];
  const Shape out_shape = model.value(out).shape;
  ValueId prediction = out;
  switch (kind) {
    case LossKind::CrossEntropy: {
      ValueId labels = g.add_input("target", {out_shape.at(0)}, DType::I64);
      g.add_output(g.add_node(OpKind::CrossEntropy, "loss", {}, {out, labels}));
      break;
    }
    case LossKind::BCEWithLogits: {
      ValueId targets = g.add_input("target", out_shape, DType::F32);
      g.add_output(g.add_node(OpKind::BCEWithLogits, "loss", {}, {out, targets}));
      break;
    }
    case LossKind::MSE: {
      ValueId targets = g.add_input("target", out_shape, DType::F32);
      g.add_output(g.add_node(OpKind::MSE, "loss", MseAttrs{false}, {out, targets}));
      break;
    }
    case LossKind::SoftmaxMSE: {
      ValueId labels = g.add_input("target", {out_shape.at(0)}, DType::I64);
      prediction = g.add_node(OpKind::Softmax, "loss_softmax", {}, {out});
      g.add_output(g.add_node(OpKind::MSE, "loss", MseAttrs{true}, {prediction, labels}));
      break;
    }
  }
  return g;
}

}  // namespace telar::graph
