#pragma once
// Adam with PyTorch's torch.optim.Adam semantics (L2 weight decay, not AdamW; no amsgrad):
//   t += 1;  g = grad + weight_decay * p
//   m = beta1 * m + (1 - beta1) * g;   v = beta2 * v + (1 - beta2) * g * g
//   p = p - (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
#include "train/optim/optimizer.hpp"

namespace telar::train {

struct AdamOptions {
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
};

class Adam final : public Optimizer {
 public:
  explicit Adam(AdamOptions options);
  std::string_view name() const override { return "adam"; }
  std::string describe() const override;
  void step(graph::ParameterSet& params, const graph::ParameterSet& grads,
            std::span<const graph::ValueId> ids, float lr) override;

 private:
  AdamOptions options_;
};

}  // namespace telar::train
