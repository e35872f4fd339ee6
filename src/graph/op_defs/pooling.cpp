// MaxPool2d, AvgPool2d: x[B,C,H,W] -> [B,C,OH,OW]; GlobalAvgPool: x[B,C,H,W] -> [B,C].
#include <fmt/format.h>

#include "graph/op_defs/op_defs.hpp"

namespace telar::graph::op_defs {

namespace {

InferredValue infer_window(const ShapeCheck& c) {
  const auto& a = c.attr<Pool2dAttrs>();
  c.arity(1, 1);
  c.rank(0, 4, "N x C x H x W");
  const auto& x = c.in(0).shape;
  if (a.pad_h * 2 > a.kernel_h || a.pad_w * 2 > a.kernel_w)
    c.bad("padding must be at most half the kernel size");
  if (a.end_pad.h < 0 || a.end_pad.w < 0 || a.pad_h + a.end_pad.h >= a.kernel_h ||
      a.pad_w + a.end_pad.w >= a.kernel_w)
    c.bad("the padding at the end must leave every window some input");
  // The end padding widens the input at the bottom and right (pad_h + end_pad.h there).
  const auto oh = window_output_size(x[2] + a.end_pad.h, a.kernel_h, a.stride_h, a.pad_h);
  const auto ow = window_output_size(x[3] + a.end_pad.w, a.kernel_w, a.stride_w, a.pad_w);
  if (oh <= 0 || ow <= 0) c.bad(fmt::format("input {}x{} is smaller than the window", x[2], x[3]));
  return {{x[0], x[1], oh, ow}, DType::F32};
}

void cost_window(const Graph& g, const Node& n, const CostOptions& o, NodeCost& c) {
  const auto& a = n.attr<Pool2dAttrs>();
  c.macs = numel_at(g, n.outputs.at(0), o.batch) * a.kernel_h * a.kernel_w;
}

std::string describe_window(const Node& n) {
  const auto& a = n.attr<Pool2dAttrs>();
  std::string s = fmt::format("{}x{} s{} p{}", a.kernel_h, a.kernel_w, a.stride_h, a.pad_h);
  if (a.end_pad.any()) s += fmt::format(" +{} bottom +{} right", a.end_pad.h, a.end_pad.w);
  return s;
}

InferredValue infer_global(const ShapeCheck& c) {
  c.arity(1, 1);
  c.rank(0, 4, "N x C x H x W");
  return {{c.in(0).shape[0], c.in(0).shape[1]}, DType::F32};
}

// One addition per input element.
void cost_global(const Graph& g, const Node& n, const CostOptions& o, NodeCost& c) {
  c.macs = numel_at(g, n.inputs.at(0), o.batch);
}

}  // namespace

const OpDef kMaxPool2d{.name = "MaxPool2d",
                       .kernels = KernelFamily::MaxPool2d,
                       .infer = infer_window,
                       .cost = cost_window,
                       .describe = describe_window,
                       .channels = per_channel};
const OpDef kAvgPool2d{.name = "AvgPool2d",
                       .kernels = KernelFamily::AvgPool2d,
                       .infer = infer_window,
                       .cost = cost_window,
                       .describe = describe_window,
                       .channels = per_channel};
const OpDef kGlobalAvgPool{.name = "GlobalAvgPool",
                           .kernels = KernelFamily::GlobalAvgPool,
                           .infer = infer_global,
                           .cost = cost_global,
                           .channels = per_channel};

}  // namespace telar::graph::op_defs
