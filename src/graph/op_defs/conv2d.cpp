// Conv2d: x[B,C,H,W], weight[O,C/groups,kh,kw], bias[O] (optional) -> [B,O,OH,OW].
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer(const ShapeCheck& c) {
  const auto& a = c.attr<Conv2dAttrs>();
  const std::size_t arity = (a.bias ? 3 : 2) + (a.post.sum ? 1 : 0);
  c.arity(arity, arity);
  check_convolution(c, a.in_channels, a.out_channels, a);
  const auto& x = c.in(0).shape;
  c.shape_is(1, {a.out_channels, a.in_channels / a.groups, a.kernel_h, a.kernel_w});
  if (a.bias) c.shape_is(2, {a.out_channels});
  const auto oh = window_output_size(x[2], a.kernel_h, a.stride_h, a.pad_h, a.dilation_h);
  const auto ow = window_output_size(x[3], a.kernel_w, a.stride_w, a.pad_w, a.dilation_w);
  if (oh <= 0 || ow <= 0)
    c.bad(fmt::format("input {}x{} is smaller than the kernel; use a larger input", x[2], x[3]));
  Shape out{x[0], a.out_channels, oh, ow};
  check_post_ops(c, a.post, arity, out);
  return {std::move(out), DType::F32};
}

void cost(const Graph& g, const Node& n, const CostOptions& o, NodeCost& c) {
  const auto& a = n.attr<Conv2dAttrs>();
  c.macs =
      numel_at(g, n.outputs.at(0), o.batch) * (a.in_channels / a.groups) * a.kernel_h * a.kernel_w;
}

std::string describe(const Node& n) {
  const auto& a = n.attr<Conv2dAttrs>();
  std::string s = fmt::format("{}->{} {}x{} s{} p{}", a.in_channels, a.out_channels, a.kernel_h,
                              a.kernel_w, a.stride_h, a.pad_h);
  if (a.dilation_h != 1) s += fmt::format(" d{}", a.dilation_h);
  if (a.groups != 1) s += a.groups == a.in_channels ? " depthwise" : fmt::format(" g{}", a.groups);
  if (!a.bias) s += " nobias";
  return s + describe_post_ops(a.post);
}

// An ungrouped convolution mixes channels; a depthwise one (one filter per channel) keeps
// them apart; other groupings, and a fused residual sum, are not traced.
ChannelFlow channels(const Graph&, const Node& n) {
  const auto& a = n.attr<Conv2dAttrs>();
  if (a.post.sum) return ChannelFlow::Opaque;
  if (a.groups == 1) return ChannelFlow::Mix;
  const bool depthwise = a.groups == a.in_channels && a.out_channels == a.in_channels;
  return depthwise ? ChannelFlow::PerChannel : ChannelFlow::Opaque;
}

}  // namespace

void check_convolution(const ShapeCheck& c, std::int64_t in, std::int64_t out,
                       const Conv2dAttrs& a) {
  c.rank(0, 4, "N x C x H x W");
  if (a.groups <= 0 || in % a.groups || out % a.groups)
    c.bad(
        fmt::format("groups={} must divide in_channels={} and out_channels={}", a.groups, in, out));
  if (c.in(0).shape[1] != in)
    c.bad(fmt::format("input has {} channels, expected in_channels {}", c.in(0).shape[1], in));
  if (a.stride_h <= 0 || a.stride_w <= 0 || a.dilation_h <= 0 || a.dilation_w <= 0 || a.pad_h < 0 ||
      a.pad_w < 0 || a.kernel_h <= 0 || a.kernel_w <= 0)
    c.bad("kernel, stride and dilation must be positive and padding non-negative");
}

const OpDef kConv2d{.name = "Conv2d",
                    .kernels = KernelFamily::Conv2d,
                    .infer = infer,
                    .cost = cost,
                    .describe = describe,
                    .lowering = Lowering::Conv,
                    .channels = channels};

}  // namespace telar::graph::op_defs
