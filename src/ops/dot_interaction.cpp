// DLRM's dot interaction. Per sample, the T+1 feature vectors S_0 = dense, S_1..S_T = the
// embeddings form Z = S S^T; the output is the dense vector followed by the lower triangle of
// Z (strictly lower, or with the diagonal under self_interaction) read row by row, which is
// DLRM's li/lj order: for i in 0..T, for j in 0..i-1 (0..i).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

struct Interaction {
  std::int64_t batch, dim, vectors, width;
  std::int64_t diag;  // 1 with self interaction: j runs to i inclusive
};

template <typename Part>
Interaction geometry(std::string_view kernel, const DotInteractionAttrs& a,
                     std::span<Part> inputs) {
  if (static_cast<std::int64_t>(inputs.size()) != a.num_sparse + 1)
    fail("internal: {}: {} inputs given, expected dense + {} embeddings", kernel, inputs.size(),
         a.num_sparse);
  detail::expect_rank(kernel, "dense", inputs[0], 2);
  Interaction g{inputs[0].dim(0), a.dim, a.num_sparse + 1,
                a.dim + graph::interaction_pairs(a.num_sparse, a.self_interaction),
                a.self_interaction ? 1 : 0};
  for (std::size_t k = 0; k < inputs.size(); ++k)
    detail::expect_shape(kernel, k == 0 ? "dense" : "embedding", inputs[k], {g.batch, g.dim});
  return g;
}

float dot(const float* u, const float* v, std::int64_t n) {
  float acc = 0.0f;
#pragma omp simd reduction(+ : acc)
  for (std::int64_t k = 0; k < n; ++k) acc += u[k] * v[k];
  return acc;
}

}  // namespace

void dot_interaction_forward(const DotInteractionAttrs& a, std::span<const Tensor> inputs,
                             Tensor& y) {
  const Interaction g = geometry("dot_interaction_forward", a, inputs);
  detail::expect_shape("dot_interaction_forward", "y", y, {g.batch, g.width});
  std::vector<const float*> s(static_cast<std::size_t>(g.vectors));
  for (std::int64_t v = 0; v < g.vectors; ++v) s[v] = inputs[v].f32();
  float* yp = y.f32();
  parallel_for(0, g.batch, g.batch * g.width * g.dim > 32768, [&](std::int64_t n) {
    float* out = yp + n * g.width;
    const float* dense = s[0] + n * g.dim;
    std::copy(dense, dense + g.dim, out);
    std::int64_t at = g.dim;
    for (std::int64_t i = 0; i < g.vectors; ++i)
      for (std::int64_t j = 0; j < i + g.diag; ++j)
        out[at++] = dot(s[i] + n * g.dim, s[j] + n * g.dim, g.dim);
  });
}

void dot_interaction_backward(const DotInteractionAttrs& a, std::span<const Tensor> inputs,
                              const Tensor& dy, std::span<Tensor> dinputs) {
  const Interaction g = geometry("dot_interaction_backward", a, inputs);
  detail::expect_shape("dot_interaction_backward", "dy", dy, {g.batch, g.width});
  if (dinputs.size() != inputs.size())
    fail("internal: dot_interaction_backward: {} gradient slots for {} inputs", dinputs.size(),
         inputs.size());
  // An undefined slot is an input that needs no gradient.
  std::vector<float*> ds(static_cast<std::size_t>(g.vectors), nullptr);
  for (std::int64_t v = 0; v < g.vectors; ++v) {
    if (!dinputs[v].defined()) continue;
    detail::expect_shape("dot_interaction_backward", "gradient", dinputs[v], {g.batch, g.dim});
    ds[v] = dinputs[v].f32();
  }
  std::vector<const float*> s(static_cast<std::size_t>(g.vectors));
  for (std::int64_t v = 0; v < g.vectors; ++v) s[v] = inputs[v].f32();
  const float* dyp = dy.f32();
  const std::int64_t dim = g.dim;

#pragma omp parallel if (g.batch * g.width * dim > 32768)
  {
    // dS_i = sum over kept pairs (i, j) of dz_ij S_j, and symmetrically for j; a diagonal pair
    // contributes 2 dz_ii S_i. Accumulated per sample in a thread-local buffer.
    std::vector<float> grad(static_cast<std::size_t>(g.vectors * dim));
#pragma omp for schedule(static)
    for (std::int64_t n = 0; n < g.batch; ++n) {
      const float* dout = dyp + n * g.width;
      std::fill(grad.begin(), grad.end(), 0.0f);
      std::copy(dout, dout + dim, grad.begin());
      std::int64_t at = dim;
      for (std::int64_t i = 0; i < g.vectors; ++i) {
        for (std::int64_t j = 0; j < i + g.diag; ++j) {
          const float dz = dout[at++];
          const float* si = s[i] + n * dim;
          const float* sj = s[j] + n * dim;
          float* gi = grad.data() + i * dim;
          float* gj = grad.data() + j * dim;
          for (std::int64_t k = 0; k < dim; ++k) gi[k] += dz * sj[k];
          for (std::int64_t k = 0; k < dim; ++k) gj[k] += dz * si[k];
        }
      }
      for (std::int64_t v = 0; v < g.vectors; ++v)
        if (ds[v]) std::copy(grad.data() + v * dim, grad.data() + (v + 1) * dim, ds[v] + n * dim);
    }
  }
}

}  // namespace telar::ops
