#pragma once
// Stochastic gradient descent with PyTorch's torch.optim.SGD semantics (dampening 0):
//   g = grad + weight_decay * p
//   buf = momentum * buf + g            (buf = g on the first step)
//   g = nesterov ? g + momentum * buf : buf      (when momentum != 0)
//   p = p - lr * g
#include "train/optim/optimizer.hpp"

namespace telar::train {

struct SgdOptions {
  float momentum = 0.0f;
  bool nesterov = false;
  float weight_decay = 0.0f;
};

class Sgd final : public Optimizer {
 public:
  explicit Sgd(SgdOptions options);
  std::string_view name() const override { return "sgd"; }
  std::string describe() const override;
  void step(graph::ParameterSet& params, const graph::ParameterSet& grads,
            std::span<const graph::ValueId> ids, float lr) override;

 private:
  SgdOptions options_;
};

}  // namespace telar::train
