// Inverted dropout. One draw from the caller's Rng seeds the call; element i's keep decision
// comes from the stream of its block (Rng::derive), so the mask depends only on the Rng state
// and the tensor size, never on the number of threads.
#include <algorithm>
#include <cstdint>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

namespace {

constexpr std::int64_t kBlock = 4096;

void check_p(float p) {
  require(p >= 0.0f && p < 1.0f, "Dropout: p={} must be in [0, 1)", p);
}

}  // namespace

void dropout_forward(float p, Rng& rng, const Tensor& x, Tensor& y, Tensor& mask) {
  check_p(p);
  const std::int64_t count = x.numel();
  detail::expect_same_numel("dropout_forward", "y", y, count);
  detail::expect_same_numel("dropout_forward", "mask", mask, count);
  const float* xp = x.f32();
  float* yp = y.f32();
  std::uint8_t* mp = mask.data<std::uint8_t>();
  const std::uint64_t seed = rng.next_u64();
  const float scale = 1.0f / (1.0f - p);
  const double drop = p;
  const std::int64_t blocks = (count + kBlock - 1) / kBlock;
  parallel_for(0, blocks, blocks > 1, [&](std::int64_t blk) {
    Rng stream = Rng::derive(seed, static_cast<std::uint64_t>(blk));
    const std::int64_t end = std::min(count, (blk + 1) * kBlock);
    for (std::int64_t i = blk * kBlock; i < end; ++i) {
      const bool keep = stream.uniform() >= drop;
      mp[i] = keep ? 1 : 0;
      yp[i] = keep ? xp[i] * scale : 0.0f;
    }
  });
}

void dropout_backward(float p, const Tensor& mask, const Tensor& dy, Tensor& dx) {
  check_p(p);
  const std::int64_t count = dy.numel();
  detail::expect_same_numel("dropout_backward", "mask", mask, count);
  detail::expect_same_numel("dropout_backward", "dx", dx, count);
  const std::uint8_t* mp = mask.data<std::uint8_t>();
  const float* dyp = dy.f32();
  float* dxp = dx.f32();
  const float scale = 1.0f / (1.0f - p);
  parallel_for(0, count, count > (1 << 16),
               [&](std::int64_t i) { dxp[i] = mp[i] ? dyp[i] * scale : 0.0f; });
}

}  // namespace telar::ops
