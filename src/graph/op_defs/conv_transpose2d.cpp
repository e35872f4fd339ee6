// ConvTranspose2d: x[B,C,H,W], weight[C,O/groups,kh,kw], bias[O] (optional) ->
// [B,O,(H-1)s-2p+d(kh-1)+op+1, ...].
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

std::int64_t transposed_size(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                             std::int64_t pad, std::int64_t dilation, std::int64_t output_padding) {
  return (in - 1) * stride - 2 * pad + dilation * (kernel - 1) + output_padding + 1;
}

InferredValue infer(const ShapeCheck& c) {
  const auto& a = c.attr<ConvTranspose2dAttrs>();
  const std::size_t arity = a.bias ? 3 : 2;
  c.arity(arity, arity);
  check_convolution(c, a.in_channels, a.out_channels, a.as_conv());
  const auto& x = c.in(0).shape;
  if (a.output_padding_h < 0 || a.output_padding_w < 0 || a.output_padding_h >= a.stride_h ||
      a.output_padding_w >= a.stride_w)
    c.bad(fmt::format("output_padding {}x{} must be below the stride {}x{}", a.output_padding_h,
                      a.output_padding_w, a.stride_h, a.stride_w));
  c.shape_is(1, {a.in_channels, a.out_channels / a.groups, a.kernel_h, a.kernel_w});
  if (a.bias) c.shape_is(2, {a.out_channels});
  const auto oh =
      transposed_size(x[2], a.kernel_h, a.stride_h, a.pad_h, a.dilation_h, a.output_padding_h);
  const auto ow =
      transposed_size(x[3], a.kernel_w, a.stride_w, a.pad_w, a.dilation_w, a.output_padding_w);
  if (oh <= 0 || ow <= 0)
    c.bad(fmt::format("the padding {}x{} leaves no output of a {}x{} input", a.pad_h, a.pad_w, x[2],
                      x[3]));
  return {Shape{x[0], a.out_channels, oh, ow}, DType::F32};
}

void cost(const Graph& g, const Node& n, const CostOptions& o, NodeCost& c) {
  const auto& a = n.attr<ConvTranspose2dAttrs>();
  // Every input element meets each tap of its group's filters once.
  c.macs =
      numel_at(g, n.inputs.at(0), o.batch) * (a.out_channels / a.groups) * a.kernel_h * a.kernel_w;
}

std::string describe(const Node& n) {
  const auto& a = n.attr<ConvTranspose2dAttrs>();
  std::string s = fmt::format("{}->{} {}x{} s{} p{}", a.in_channels, a.out_channels, a.kernel_h,
                              a.kernel_w, a.stride_h, a.pad_h);
  if (a.output_padding_h || a.output_padding_w)
    s += fmt::format(" op{}x{}", a.output_padding_h, a.output_padding_w);
  if (a.dilation_h != 1) s += fmt::format(" d{}", a.dilation_h);
  if (a.groups != 1) s += fmt::format(" g{}", a.groups);
  if (!a.bias) s += " nobias";
  return s;
}

}  // namespace

// Runs on the host of an accelerator; its channels are not traced for pruning (Opaque).
const OpDef kConvTranspose2d{.name = "ConvTranspose2d",
                             .kernels = KernelFamily::ConvTranspose2d,
                             .infer = infer,
                             .cost = cost,
                             .describe = describe};

}  // namespace telar::graph::op_defs
