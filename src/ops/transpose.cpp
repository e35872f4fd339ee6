// Transpose: y's element at index (i_0, ..., i_{r-1}) is x's element at the index whose
// dimension perm[d] is i_d. The output is walked in order, its last dimension as the inner loop.
#include <array>
#include <cstdint>
#include <vector>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

constexpr std::size_t kMaxRank = 8;

void permute(std::string_view kernel, std::span<const std::int64_t> perm, const Tensor& x,
             Tensor& y) {
  const std::size_t rank = perm.size();
  if (rank != static_cast<std::size_t>(x.rank()) || rank == 0 || rank > kMaxRank)
    fail("internal: {}: permutation of {} entries for {}", kernel, rank, shape_str(x.shape()));
  Shape out(rank);
  std::array<std::int64_t, kMaxRank> x_stride{}, stride{};
  std::int64_t step = 1;
  for (std::size_t k = rank; k-- > 0;) {
    x_stride[k] = step;
    step *= x.dim(static_cast<int>(k));
  }
  for (std::size_t d = 0; d < rank; ++d) {
    out[d] = x.dim(static_cast<int>(perm[d]));
    stride[d] = x_stride[static_cast<std::size_t>(perm[d])];
  }
  detail::expect_shape(kernel, "y", y, out);
  const std::size_t size = dtype_size(x.dtype());
  if (size != sizeof(float)) fail("internal: {}: float32 tensors only", kernel);
  const float* xp = x.f32();
  float* yp = y.f32();
  const std::int64_t inner = out[rank - 1], inner_stride = stride[rank - 1];
  const std::int64_t rows = inner ? y.numel() / inner : 0;
  parallel_for(0, rows, y.numel() > (1 << 16), [&](std::int64_t row) {
    std::int64_t offset = 0, r = row;
    for (std::size_t k = rank - 1; k-- > 0;) {
      offset += (r % out[k]) * stride[k];
      r /= out[k];
    }
    float* o = yp + row * inner;
    for (std::int64_t i = 0; i < inner; ++i) o[i] = xp[offset + i * inner_stride];
  });
}

}  // namespace

void transpose_forward(std::span<const std::int64_t> perm, const Tensor& x, Tensor& y) {
  permute("transpose_forward", perm, x, y);
}

void transpose_backward(std::span<const std::int64_t> perm, const Tensor& dy, Tensor& dx) {
  std::vector<std::int64_t> inverse(perm.size());
  for (std::size_t d = 0; d < perm.size(); ++d)
    inverse[static_cast<std::size_t>(perm[d])] = static_cast<std::int64_t>(d);
  permute("transpose_backward", inverse, dy, dx);
}

}  // namespace telar::ops
