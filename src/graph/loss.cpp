#include "graph/loss.hpp"

#include "core/enum_names.hpp"
#include "core/error.hpp"

namespace telar::graph {

namespace {
constexpr EnumNames<LossKind, LossKind::SoftmaxMSE> kLossNames{
    {"cross_entropy", "bce", "mse", "softmax_mse"}};
}

LossKind parse_loss(const std::string& name) {
  if (auto kind = kLossNames.find(name)) return *kind;
  fail("unknown loss '{}'; use {}", name, kLossNames.choices());
}

std::string loss_name(LossKind kind) {
  return std::string(kLossNames(kind));
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
