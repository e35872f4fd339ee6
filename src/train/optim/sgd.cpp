#include "train/optim/sgd.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "train/optim/update_loop.hpp"

namespace telar::train {

namespace {
constexpr std::size_t kMomentumSlot = 0;
}

Sgd::Sgd(SgdOptions options) : Optimizer({"momentum_buffer"}), options_(options) {
  require_non_negative(options_.momentum, "sgd: momentum", "give --momentum 0 or more (e.g. 0.9)");
  require_non_negative(options_.weight_decay, "sgd: weight decay", "give --weight-decay 0 or more");
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
    // Named copies, not structured bindings: the lambdas below capture them (clang 14, which
    // builds the fuzzers, does not capture bindings).
    const Update u = update_of(params, grads, id);
    Tensor& param = u.param;
    float* const p = u.p;
    const float* const grad = u.grad;
    const std::int64_t n = u.n;
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
