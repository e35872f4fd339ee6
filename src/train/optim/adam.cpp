#include "train/optim/adam.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "train/optim/update_loop.hpp"

namespace telar::train {

namespace {
constexpr std::size_t kFirstMomentSlot = 0;
constexpr std::size_t kSecondMomentSlot = 1;
}  // namespace

Adam::Adam(AdamOptions options) : Optimizer({"exp_avg", "exp_avg_sq"}), options_(options) {
  require(options_.beta1 >= 0.0f && options_.beta1 < 1.0f,
          "adam: beta1 {} is outside [0, 1); the usual value is 0.9", options_.beta1);
  require(options_.beta2 >= 0.0f && options_.beta2 < 1.0f,
          "adam: beta2 {} is outside [0, 1); the usual value is 0.999", options_.beta2);
  require(options_.eps > 0.0f, "adam: eps {} must be positive; the usual value is 1e-8",
          options_.eps);
  require_non_negative(options_.weight_decay, "adam: weight decay",
                       "give --weight-decay 0 or more");
}

std::string Adam::describe() const {
  return fmt::format("adam(beta1={}, beta2={}, eps={}, weight_decay={})", options_.beta1,
                     options_.beta2, options_.eps, options_.weight_decay);
}

void Adam::step(graph::ParameterSet& params, const graph::ParameterSet& grads,
                std::span<const graph::ValueId> ids, float lr) {
  const float beta1 = options_.beta1, beta2 = options_.beta2;
  const float eps = options_.eps, wd = options_.weight_decay;
  const float one_minus_beta1 = 1.0f - beta1, one_minus_beta2 = 1.0f - beta2;
  for (graph::ValueId id : ids) {
    // Named copies, not structured bindings: the lambdas below capture them (clang 14, which
    // builds the fuzzers, does not capture bindings).
    const Update u = update_of(params, grads, id);
    Tensor& param = u.param;
    float* const p = u.p;
    const float* const grad = u.grad;
    const std::int64_t n = u.n;
    float* m = slot(kFirstMomentSlot, id, param).f32();
    float* v = slot(kSecondMomentSlot, id, param).f32();
    const auto t = static_cast<double>(count_step(id));
    // The bias corrections are computed in double, as PyTorch does them in Python floats, and
    // applied as f32 scalars, as its tensor kernels do.
    const double bias_correction1 = 1.0 - std::pow(static_cast<double>(beta1), t);
    const double bias_correction2 = 1.0 - std::pow(static_cast<double>(beta2), t);
    const auto step_size = static_cast<float>(static_cast<double>(lr) / bias_correction1);
    const auto bias_correction2_sqrt = static_cast<float>(std::sqrt(bias_correction2));
    for_each_element(n, [=](std::int64_t i) {
      const float g = grad[i] + wd * p[i];
      m[i] = beta1 * m[i] + one_minus_beta1 * g;
      v[i] = beta2 * v[i] + one_minus_beta2 * g * g;
      const float denom = std::sqrt(v[i]) / bias_correction2_sqrt + eps;
      p[i] -= step_size * (m[i] / denom);
    });
  }
}

}  // namespace telar::train
