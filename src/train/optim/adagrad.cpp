#include "train/optim/adagrad.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "train/optim/update_loop.hpp"

namespace telar::train {

namespace {
constexpr std::size_t kSumSlot = 0;
}

Adagrad::Adagrad(AdagradOptions options) : Optimizer({"sum"}), options_(options) {
  require_non_negative(options_.lr_decay, "adagrad: lr decay", "give 0 or more");
  require_non_negative(options_.weight_decay, "adagrad: weight decay",
                       "give --weight-decay 0 or more");
  require_non_negative(options_.initial_accumulator, "adagrad: initial accumulator",
                       "give 0 or more");
  require(options_.eps > 0.0f, "adagrad: eps {} must be positive", options_.eps);
}

std::string Adagrad::describe() const {
  return fmt::format("adagrad(lr_decay={}, weight_decay={}, initial_accumulator={}, eps={})",
                     options_.lr_decay, options_.weight_decay, options_.initial_accumulator,
                     options_.eps);
}

void Adagrad::step(graph::ParameterSet& params, const graph::ParameterSet& grads,
                   std::span<const graph::ValueId> ids, float lr) {
  const float wd = options_.weight_decay, eps = options_.eps;
  for (graph::ValueId id : ids) {
    // Named copies, not structured bindings: the lambdas below capture them (clang 14, which
    // builds the fuzzers, does not capture bindings).
    const Update u = update_of(params, grads, id);
    Tensor& param = u.param;
    float* const p = u.p;
    const float* const grad = u.grad;
    const std::int64_t n = u.n;
    const bool created = !has_slot(kSumSlot, id);
    Tensor& sum_tensor = slot(kSumSlot, id, param);
    if (created) sum_tensor.fill(options_.initial_accumulator);
    float* sum = sum_tensor.f32();
    const std::int64_t t = count_step(id);
    const auto clr = static_cast<float>(static_cast<double>(lr) /
                                        (1.0 + static_cast<double>(t - 1) * options_.lr_decay));
    for_each_element(n, [=](std::int64_t i) {
      const float g = grad[i] + wd * p[i];
      sum[i] += g * g;
      p[i] -= clr * (g / (std::sqrt(sum[i]) + eps));
    });
  }
}

}  // namespace telar::train
