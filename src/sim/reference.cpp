#include "sim/reference.hpp"

#include "core/rng.hpp"

namespace telar::sim {

namespace {
// Single-precision dot product, vectorised. With the generated operands (small integers) every
// partial sum is exact; for given operands the check allows float rounding.
float dot(const float* a, const float* b, int n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}
}  // namespace

DenseData make_operands(const DenseOp& op, std::uint64_t seed) {
  DenseData d;
  Rng input_rng = Rng::derive(seed, 1), weight_rng = Rng::derive(seed, 2);
  d.input.resize(static_cast<std::size_t>(op.input_elements()));
  d.weights.resize(static_cast<std::size_t>(op.weight_elements()));
  // 0..9 from the top bits of a 32-bit draw (multiply-shift): deterministic and fast; the tiny
  // bias of this method does not matter for operand values.
  auto digit = [](Rng& rng) {
    return static_cast<float>((static_cast<std::uint64_t>(rng.next_u32()) * 10) >> 32);
  };
  for (float& v : d.input) v = digit(input_rng);
  for (float& v : d.weights) v = digit(weight_rng);
  return d;
}

std::vector<float> reference_output(const DenseOp& op, const DenseData& d) {
  const int Xo = op.out_x(), Yo = op.out_y(), Cg = op.c_per_group(), Kg = op.k_per_group();
  std::vector<float> out(static_cast<std::size_t>(op.output_elements()), 0.0f);
  // With one group a filter row (S columns × C channels) is contiguous in input and weights.
  const bool rows_contiguous = op.G == 1;
  for (int n = 0; n < op.N; ++n)
    for (int x = 0; x < Xo; ++x)
      for (int y = 0; y < Yo; ++y)
        for (int k = 0; k < op.K; ++k) {
          const int g = k / Kg;
          float sum = 0.0f;
          for (int r = 0; r < op.R; ++r) {
            const std::size_t row =
                (static_cast<std::size_t>(n) * op.X + static_cast<std::size_t>(x) * op.stride + r) *
                op.Y;
            const float* w = &d.weights[(static_cast<std::size_t>(k) * op.R + r) * op.S * Cg];
            const std::size_t col0 = static_cast<std::size_t>(y) * op.stride;
            if (rows_contiguous) {
              sum += dot(&d.input[(row + col0) * op.C], w, op.S * Cg);
            } else {
              for (int s = 0; s < op.S; ++s)
                sum += dot(&d.input[(row + col0 + s) * op.C + static_cast<std::size_t>(g) * Cg],
                           w + static_cast<std::size_t>(s) * Cg, Cg);
            }
          }
          out[((static_cast<std::size_t>(n) * Xo + x) * Yo + y) * op.K + k] = sum;
        }
  return out;
}

}  // namespace telar::sim
