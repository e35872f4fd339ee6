// The post-ops of an inference-compiled Conv2d or Linear, applied to its output in place.
#include <cstdint>

#include "core/parallel.hpp"
#include "ops/detail.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

void apply_post_ops(const graph::PostOps& post, const Tensor* summand, Tensor& y) {
  if (post.sum) {
    if (!summand) fail("internal: apply_post_ops needs the summand of a post-op sum");
    detail::expect_same_numel("apply_post_ops", "summand", *summand, y.numel());
    const std::int64_t n = y.numel();
    const float* s = summand->f32();
    float* yp = y.f32();
    parallel_for(0, n, n > 65536, [&](std::int64_t i) { yp[i] += s[i]; });
  }
  if (post.activation != graph::OpKind::Count)
    activation_forward(activation_of(post.activation), y, y,
                       {post.eltwise.alpha, post.eltwise.beta});
}

}  // namespace telar::ops
