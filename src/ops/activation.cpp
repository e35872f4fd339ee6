// Element-wise activations. NaN inputs propagate (like PyTorch); derivatives at the kinks
// follow PyTorch: ReLU passes the gradient where x > 0, ReLU6 where 0 < x < 6, LeakyReLU
// scales it by alpha where x <= 0, HardSigmoid passes alpha where 0 < alpha x + beta < 1,
// HardSwish's is 0 below -3, x / 3 + 1/2 up to 3 and 1 above; SiLU's is s (1 + x (1 - s)) with
// s = sigmoid(x); GELU's is Phi(x) + x phi(x) (the normal distribution's cdf and density). Sqrt's
// is 1 / (2 y) (infinite at 0, like PyTorch's), Erf's 2 / sqrt(pi) exp(-x^2), Pow's (x^e) e
// x^(e-1).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

constexpr std::int64_t kParallelThreshold = 1 << 16;
constexpr float kOneOverSqrtTwo = 0.7071067811865476f;

float sigmoid(float x) {
  // Two branches so exp never overflows.
  if (x >= 0.0f) return 1.0f / (1.0f + std::exp(-x));
  const float e = std::exp(x);
  return e / (1.0f + e);
}

}  // namespace

Activation activation_of(graph::OpKind kind) {
  switch (kind) {
    case graph::OpKind::ReLU: return Activation::ReLU;
    case graph::OpKind::ReLU6: return Activation::ReLU6;
    case graph::OpKind::Sigmoid: return Activation::Sigmoid;
    case graph::OpKind::Tanh: return Activation::Tanh;
    case graph::OpKind::LeakyReLU: return Activation::LeakyReLU;
    case graph::OpKind::HardSigmoid: return Activation::HardSigmoid;
    case graph::OpKind::HardSwish: return Activation::HardSwish;
    case graph::OpKind::SiLU:
      return Activation::SiLU;
    case graph::OpKind::GELU:
      return Activation::GELU;
    case graph::OpKind::Sqrt: return Activation::Sqrt;
    case graph::OpKind::Erf: return Activation::Erf;
    case graph::OpKind::Pow:
      return Activation::Pow;
    default: fail("internal: {} is not an activation", graph::op_name(kind));
  }
}

void activation_forward(Activation kind, const Tensor& x, Tensor& y, ActivationParams p) {
  detail::expect_same_numel("activation_forward", "y", y, x.numel());
  const std::int64_t count = x.numel();
  const float* xp = x.f32();
  float* yp = y.f32();
  switch (kind) {
    case Activation::ReLU:
      parallel_for(0, count, count > kParallelThreshold,
                   [&](std::int64_t i) { yp[i] = xp[i] < 0.0f ? 0.0f : xp[i]; });
      return;
    case Activation::ReLU6:
      parallel_for(0, count, count > kParallelThreshold, [&](std::int64_t i) {
        yp[i] = xp[i] < 0.0f ? 0.0f : (xp[i] > 6.0f ? 6.0f : xp[i]);
      });
      return;
    case Activation::Sigmoid:
      parallel_for(0, count, count > kParallelThreshold,
                   [&](std::int64_t i) { yp[i] = sigmoid(xp[i]); });
      return;
    case Activation::Tanh:
      parallel_for(0, count, count > kParallelThreshold,
                   [&](std::int64_t i) { yp[i] = std::tanh(xp[i]); });
      return;
    case Activation::LeakyReLU:
      parallel_for(0, count, count > kParallelThreshold,
                   [&](std::int64_t i) { yp[i] = xp[i] < 0.0f ? p.alpha * xp[i] : xp[i]; });
      return;
    case Activation::HardSigmoid:
      parallel_for(0, count, count > kParallelThreshold, [&](std::int64_t i) {
        yp[i] = std::clamp(p.alpha * xp[i] + p.beta, 0.0f, 1.0f);
      });
      return;
    case Activation::HardSwish:
      parallel_for(0, count, count > kParallelThreshold, [&](std::int64_t i) {
        yp[i] = xp[i] * std::clamp(xp[i] + 3.0f, 0.0f, 6.0f) / 6.0f;
      });
      return;
    case Activation::SiLU:
      parallel_for(0, count, count > kParallelThreshold,
                   [&](std::int64_t i) { yp[i] = xp[i] * sigmoid(xp[i]); });
      return;
    case Activation::GELU:
      parallel_for(0, count, count > kParallelThreshold, [&](std::int64_t i) {
        yp[i] = 0.5f * xp[i] * (1.0f + std::erf(xp[i] * kOneOverSqrtTwo));
      });
      return;
    case Activation::Sqrt:
      parallel_for(0, count, count > kParallelThreshold,
                   [&](std::int64_t i) { yp[i] = std::sqrt(xp[i]); });
      return;
    case Activation::Erf:
      parallel_for(0, count, count > kParallelThreshold,
                   [&](std::int64_t i) { yp[i] = std::erf(xp[i]); });
      return;
    case Activation::Pow:
      parallel_for(0, count, count > kParallelThreshold,
                   [&](std::int64_t i) { yp[i] = std::pow(xp[i], p.alpha); });
      return;
  }
  fail("internal: activation_forward: unknown activation {}", static_cast<int>(kind));
}

void activation_backward(Activation kind, const Tensor& x, const Tensor& y, const Tensor& dy,
                         Tensor& dx, ActivationParams p) {
  const std::int64_t count = dy.numel();
  detail::expect_same_numel("activation_backward", "dx", dx, count);
  const float* dyp = dy.f32();
  float* dxp = dx.f32();
  switch (kind) {
    case Activation::ReLU: {
      detail::expect_same_numel("activation_backward", "x", x, count);
      const float* xp = x.f32();
      parallel_for(0, count, count > kParallelThreshold,
                   [&](std::int64_t i) { dxp[i] = xp[i] > 0.0f ? dyp[i] : 0.0f; });
      return;
    }
    case Activation::ReLU6: {
      detail::expect_same_numel("activation_backward", "x", x, count);
      const float* xp = x.f32();
      parallel_for(0, count, count > kParallelThreshold, [&](std::int64_t i) {
        dxp[i] = (xp[i] > 0.0f && xp[i] < 6.0f) ? dyp[i] : 0.0f;
      });
      return;
    }
    case Activation::Sigmoid: {
      detail::expect_same_numel("activation_backward", "y", y, count);
      const float* yp = y.f32();
      parallel_for(0, count, count > kParallelThreshold,
                   [&](std::int64_t i) { dxp[i] = dyp[i] * yp[i] * (1.0f - yp[i]); });
      return;
    }
    case Activation::Tanh: {
      detail::expect_same_numel("activation_backward", "y", y, count);
      const float* yp = y.f32();
      parallel_for(0, count, count > kParallelThreshold,
                   [&](std::int64_t i) { dxp[i] = dyp[i] * (1.0f - yp[i] * yp[i]); });
      return;
    }
    case Activation::Sqrt: {
      detail::expect_same_numel("activation_backward", "y", y, count);
      const float* yp = y.f32();
      parallel_for(0, count, count > kParallelThreshold,
                   [&](std::int64_t i) { dxp[i] = dyp[i] * 0.5f / yp[i]; });
      return;
    }
    case Activation::SiLU: {
      detail::expect_same_numel("activation_backward", "x", x, count);
      const float* xp = x.f32();
      parallel_for(0, count, count > kParallelThreshold, [&](std::int64_t i) {
        const float s = sigmoid(xp[i]);
        dxp[i] = dyp[i] * s * (1.0f + xp[i] * (1.0f - s));
      });
      return;
    }
    case Activation::GELU: {
      detail::expect_same_numel("activation_backward", "x", x, count);
      const float* xp = x.f32();
      constexpr float kOneOverSqrtTwoPi = 0.3989422804014327f;
      parallel_for(0, count, count > kParallelThreshold, [&](std::int64_t i) {
        const float phi = kOneOverSqrtTwoPi * std::exp(-0.5f * xp[i] * xp[i]);
        dxp[i] = dyp[i] * (0.5f * (1.0f + std::erf(xp[i] * kOneOverSqrtTwo)) + xp[i] * phi);
      });
      return;
    }
    case Activation::Erf: {
      detail::expect_same_numel("activation_backward", "x", x, count);
      const float* xp = x.f32();
      constexpr float kTwoOverSqrtPi = 1.1283791670955126f;
      parallel_for(0, count, count > kParallelThreshold, [&](std::int64_t i) {
        dxp[i] = dyp[i] * kTwoOverSqrtPi * std::exp(-xp[i] * xp[i]);
      });
      return;
    }
    case Activation::Pow: {
      detail::expect_same_numel("activation_backward", "x", x, count);
      const float* xp = x.f32();
      const float e = p.alpha;
      parallel_for(0, count, count > kParallelThreshold, [&](std::int64_t i) {
        // d/dx x^e = e x^(e-1); 0 for e = 0 (PyTorch's, whatever x).
        dxp[i] = e == 0.0f ? 0.0f : dyp[i] * e * std::pow(xp[i], e - 1.0f);
      });
      return;
    }
    case Activation::LeakyReLU:
    case Activation::HardSigmoid:
    case Activation::HardSwish: {
      detail::expect_same_numel("activation_backward", "x", x, count);
      const float* xp = x.f32();
      parallel_for(0, count, count > kParallelThreshold, [&](std::int64_t i) {
        const float v = xp[i];
        float slope;
        if (kind == Activation::LeakyReLU) {
          slope = v > 0.0f ? 1.0f : p.alpha;
        } else if (kind == Activation::HardSigmoid) {
          const float z = p.alpha * v + p.beta;
          slope = z > 0.0f && z < 1.0f ? p.alpha : 0.0f;
        } else {
          slope = v < -3.0f ? 0.0f : (v <= 3.0f ? v / 3.0f + 0.5f : 1.0f);
        }
        dxp[i] = dyp[i] * slope;
      });
      return;
    }
  }
  fail("internal: activation_backward: unknown activation {}", static_cast<int>(kind));
}

}  // namespace telar::ops
