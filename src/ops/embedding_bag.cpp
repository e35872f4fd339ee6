// EmbeddingBag over CSR (indices + per-bag start offsets), sum or mean, optional per-index
// weights. Inputs a user controls (indices and offsets come from data files) are validated
// up front, before any thread starts, so a bad index is a telar::Error and never a bad read.
#include <algorithm>
#include <cstdint>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

struct Bags {
  std::int64_t count = 0;  // B
  std::int64_t nnz = 0;
  const std::int64_t* offsets = nullptr;
  const std::int64_t* indices = nullptr;
  std::int64_t begin(std::int64_t b) const { return offsets[b]; }
  std::int64_t end(std::int64_t b) const { return b + 1 < count ? offsets[b + 1] : nnz; }
};

Bags validate(std::string_view kernel, const EmbeddingBagAttrs& a, const Tensor& indices,
              const Tensor& offsets, const Tensor* per_sample_weights) {
  detail::expect_rank(kernel, "indices", indices, 1);
  detail::expect_rank(kernel, "offsets", offsets, 1);
  Bags bags;
  bags.count = offsets.numel();
  bags.nnz = indices.numel();
  bags.offsets = offsets.data<std::int64_t>();
  bags.indices = indices.data<std::int64_t>();
  if (per_sample_weights)
    detail::expect_shape(kernel, "per_sample_weights", *per_sample_weights, {bags.nnz});

  // Like PyTorch, the first bag must start at 0: indices before it would silently be ignored.
  if (bags.count > 0 && bags.offsets[0] != 0)
    fail(
        "EmbeddingBag: offsets[0] is {}, but the first bag must start at index 0 (offsets are "
        "the start of each bag within the {} indices)",
        bags.offsets[0], bags.nnz);
  for (std::int64_t b = 0; b + 1 < bags.count; ++b) {
    if (bags.offsets[b + 1] < bags.offsets[b])
      fail(
          "EmbeddingBag: offsets must be non-decreasing, but bag {} starts at {} and bag {} at "
          "{}",
          b, bags.offsets[b], b + 1, bags.offsets[b + 1]);
  }
  if (bags.count > 0 && bags.offsets[bags.count - 1] > bags.nnz)
    fail("EmbeddingBag: the last bag ({}) starts at offset {}, past the end of the {} indices",
         bags.count - 1, bags.offsets[bags.count - 1], bags.nnz);

  for (std::int64_t b = 0; b < bags.count; ++b) {
    for (std::int64_t k = bags.begin(b); k < bags.end(b); ++k) {
      const std::int64_t row = bags.indices[k];
      if (row < 0 || row >= a.num_embeddings)
        fail(
            "EmbeddingBag: index {} (position {}, bag {}) is out of range for a table of {} "
            "rows; indices must be in [0, {})",
            row, k, b, a.num_embeddings, a.num_embeddings);
    }
  }
  return bags;
}

}  // namespace

void embedding_bag_forward(const EmbeddingBagAttrs& a, const Tensor& indices, const Tensor& offsets,
                           const Tensor& weight, const Tensor* per_sample_weights, Tensor& y) {
  constexpr std::string_view kName = "embedding_bag_forward";
  detail::expect_shape(kName, "weight", weight, {a.num_embeddings, a.dim});
  const Bags bags = validate(kName, a, indices, offsets, per_sample_weights);
  detail::expect_shape(kName, "y", y, {bags.count, a.dim});
  const std::int64_t dim = a.dim;
  const float* wp = weight.f32();
  const float* psw = per_sample_weights ? per_sample_weights->f32() : nullptr;
  float* yp = y.f32();
  parallel_for_dynamic(0, bags.count, bags.count > 1 && bags.nnz * dim > 32768, 16,
                       [&](std::int64_t b) {
                         float* out = yp + b * dim;
                         std::fill(out, out + dim, 0.0f);
                         const std::int64_t begin = bags.begin(b), end = bags.end(b);
                         for (std::int64_t k = begin; k < end; ++k) {
                           const float* row = wp + bags.indices[k] * dim;
                           const float s = psw ? psw[k] : 1.0f;
#pragma omp simd
                           for (std::int64_t d = 0; d < dim; ++d) out[d] += s * row[d];
                         }
                         if (a.mode == graph::EmbeddingBagMode::Mean && end > begin) {
                           const float count = static_cast<float>(end - begin);
                           for (std::int64_t d = 0; d < dim; ++d) out[d] /= count;
                         }
                       });
}

void embedding_bag_backward(const EmbeddingBagAttrs& a, const Tensor& indices,
                            const Tensor& offsets, const Tensor* per_sample_weights,
                            const Tensor& dy, Tensor& dweight) {
  constexpr std::string_view kName = "embedding_bag_backward";
  detail::expect_shape(kName, "dweight", dweight, {a.num_embeddings, a.dim});
  const Bags bags = validate(kName, a, indices, offsets, per_sample_weights);
  detail::expect_shape(kName, "dy", dy, {bags.count, a.dim});
  const std::int64_t dim = a.dim;
  const float* psw = per_sample_weights ? per_sample_weights->f32() : nullptr;
  const float* dyp = dy.f32();
  float* dwp = dweight.f32();
  const std::int64_t rows = a.num_embeddings;
  parallel_for(0, rows, rows * dim > (1 << 16),
               [&](std::int64_t r) { std::fill(dwp + r * dim, dwp + (r + 1) * dim, 0.0f); });
  // Rows repeat across bags, so the scatter is serial (and its summation order fixed).
  for (std::int64_t b = 0; b < bags.count; ++b) {
    const std::int64_t begin = bags.begin(b), end = bags.end(b);
    if (end == begin) continue;
    const float bag_scale =
        a.mode == graph::EmbeddingBagMode::Mean ? 1.0f / static_cast<float>(end - begin) : 1.0f;
    const float* g = dyp + b * dim;
    for (std::int64_t k = begin; k < end; ++k) {
      float* row = dwp + bags.indices[k] * dim;
      const float s = (psw ? psw[k] : 1.0f) * bag_scale;
#pragma omp simd
      for (std::int64_t d = 0; d < dim; ++d) row[d] += s * g[d];
    }
  }
}

}  // namespace telar::ops
