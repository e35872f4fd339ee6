#include "train/optim/sgd.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "train/optim/update_loop.hpp"

namespace telar::train {

namespace {
constexpr std::size_t kMomentumSlot = 0;
}

Sgd::Sgd(SgdOptions options) : Optimizer({"momentum_buffer"}), options_(options) {
  require(std::isfinite(options_.momentum) && options_.momentum >= 0.0f,
          "sgd: momentum {} is not a number >= 0; give --momentum 0 or more (e.g. 0.9)",
          options_.momentum);
  require(std::isfinite(options_.weight_decay) && options_.weight_decay >= 0.0f,
          "sgd: weight decay {} is not a number >= 0; give --weight-decay 0 or more",
          options_.weight_decay);
  require(!options_.nesterov || options_.momentum > 0.0f,
          "sgd: Nesterov momentum needs a momentum above 0; give --momentum (e.g. 0.9)");
}

std::string Sgd::describe() const {
  return fmt::format("sgd(momentum={}, nesterov={}, weight_decay={})", options_.momentum,
                     options_.nesterov, options_.weight_decay);
}

void Sgd::step(graph::ParameterSet& params, const graph::ParameterSet& grads,
               std::span<const graph::ValueId> ids, float lr) {
  const float mu = options_.momentum, wd = options_.weight_decay;
  const bool nesterov = options_.nesterov;
  for (graph::ValueId id : ids) {
    check_pair(params, grads, id);
    Tensor& param = params.at(id);
    float* p = param.f32();
    const float* grad = grads.at(id).f32();
    const std::int64_t n = param.numel();
    count_step(id);
    if (mu == 0.0f) {
      for_each_element(n, [=](std::int64_t i) { p[i] -= lr * (grad[i] + wd * p[i]); });
      continue;
    }
    // PyTorch starts the buffer as a copy of the first gradient; a zero-filled buffer gives
    // exactly that (momentum * 0 + g == g), so no first-step case is needed.
    float* buf = slot(kMomentumSlot, id, param).f32();
    for_each_element(n, [=](std::int64_t i) {
      const float g = grad[i] + wd * p[i];
      const float b = mu * buf[i] + g;
      buf[i] = b;
      p[i] -= lr * (nesterov ? g + mu * b : b);
    });
  }
}

}  // namespace telar::train
