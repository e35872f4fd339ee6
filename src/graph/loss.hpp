#pragma once
// Training graphs: a model graph plus its loss. The result has the model's inputs followed by
// the target input, and two outputs: the model's output and the scalar loss (last).
#include <string>

#include "graph/graph.hpp"

namespace telar::graph {

enum class LossKind {
  CrossEntropy,   // logits [B,C] vs labels [B] (i64)
  BCEWithLogits,  // logits [B,1] vs targets [B,1] (f32)
  MSE,            // prediction vs targets of the same shape (f32)
  SoftmaxMSE,     // MSE between softmax(logits) and one-hot labels (seed-002's loss)
};

LossKind parse_loss(const std::string& name);  // cross_entropy|bce|mse|softmax_mse
std::string loss_name(LossKind kind);

// Copies `model` (parameter ValueIds are unchanged, so its ParameterSet still fits) and
// appends the target input "target" and the loss node "loss".
Graph with_loss(const Graph& model, LossKind kind);

}  // namespace telar::graph
