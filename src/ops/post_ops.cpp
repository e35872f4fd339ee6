// The post-ops of an inference-compiled Conv2d or Linear, applied to its output in place.
#include "core/error.hpp"
#include "ops/kernels.hpp"

namespace telar::ops {

void apply_post_ops(const graph::PostOps& post, const Tensor* summand, Tensor& y) {
  if (post.sum) {
    if (!summand) fail("internal: apply_post_ops needs the summand of a post-op sum");
    binary_forward(Binary::Add, y, *summand, y);
  }
  if (post.activation != graph::OpKind::Count)
    activation_forward(activation_of(post.activation), y, y,
                       {post.eltwise.alpha, post.eltwise.beta});
}

}  // namespace telar::ops
