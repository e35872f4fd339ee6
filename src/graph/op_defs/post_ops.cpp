// The post-ops an inference-compiled Conv2d or Linear carries (graph/op.hpp): their checks and
// their words in dump(), shared by both ops' definitions.
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

void check_post_ops(const ShapeCheck& check, const PostOps& post, std::size_t arity,
                    const Shape& output) {
  if (post.activation != OpKind::Count && !fusible_activation(post.activation))
    check.bad(
        fmt::format("{} cannot be a post-op (fusible: ReLU, ReLU6, Sigmoid, Tanh, "
                    "LeakyReLU, HardSwish, SiLU, GELU)",
                    op_name(post.activation)));
  if (!post.sum) return;
  const Value& summand = check.in(arity - 1);
  if (summand.dtype != DType::F32 || summand.shape != output)
    check.bad(fmt::format("the summand '{}' {} must have the output's shape {}", summand.name,
                          shape_str(summand.shape), shape_str(output)));
}

std::string describe_post_ops(const PostOps& post) {
  std::string s;
  if (post.sum) s += " +sum";
  if (post.activation != OpKind::Count) s += fmt::format(" +{}", op_name(post.activation));
  return s;
}

}  // namespace telar::graph::op_defs
