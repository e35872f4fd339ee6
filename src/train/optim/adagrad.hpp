#pragma once
// Adagrad with PyTorch's torch.optim.Adagrad semantics:
//   t += 1;  g = grad + weight_decay * p;  clr = lr / (1 + (t - 1) * lr_decay)
//   sum += g * g;  p = p - clr * g / (sqrt(sum) + eps)
#include "train/optim/optimizer.hpp"

namespace telar::train {

struct AdagradOptions {
  float lr_decay = 0.0f;
  float weight_decay = 0.0f;
  float initial_accumulator = 0.0f;
  float eps = 1e-10f;
};

class Adagrad final : public Optimizer {
 public:
  explicit Adagrad(AdagradOptions options);
  std::string_view name() const override { return "adagrad"; }
  std::string describe() const override;
  void step(graph::ParameterSet& params, const graph::ParameterSet& grads,
            std::span<const graph::ValueId> ids, float lr) override;

 private:
  AdagradOptions options_;
};

}  // namespace telar::train
