#include "graph/shape_inference.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace telar::graph {

std::int64_t window_output_size(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                                std::int64_t pad, std::int64_t dilation) {
  const std::int64_t effective = dilation * (kernel - 1) + 1;
  if (in + 2 * pad < effective) return 0;
  return (in + 2 * pad - effective) / stride + 1;
}

namespace {

struct Checker {
  const Graph& graph;
  OpKind kind;
  const std::string& node;
  const std::vector<ValueId>& inputs;

  [[noreturn]] void bad(const std::string& what) const {
    fail("{} '{}': {}", op_name(kind), node, what);
  }
  const Value& in(std::size_t i) const { return graph.value(inputs.at(i)); }
  void arity(std::size_t lo, std::size_t hi) const {
    if (inputs.size() < lo || inputs.size() > hi)
      bad(fmt::format("expects {} to {} inputs, got {}", lo, hi, inputs.size()));
  }
  void rank(std::size_t i, int r, const char* layout) const {
    if (static_cast<int>(in(i).shape.size()) != r)
      bad(fmt::format("input '{}' has shape {}, expected rank {} ({})", in(i).name,
                      shape_str(in(i).shape), r, layout));
  }
  void dtype(std::size_t i, DType t) const {
    if (in(i).dtype != t)
      bad(fmt::format("input '{}' has dtype {}, expected {}", in(i).name,
                      dtype_name(in(i).dtype), dtype_name(t)));
  }
  void shape_is(std::size_t i, const Shape& s) const {
    if (in(i).shape != s)
      bad(fmt::format("'{}' has shape {}, expected {}", in(i).name, shape_str(in(i).shape),
                      shape_str(s)));
  }
};

}  // namespace

InferredValue infer_output(const Graph& graph, OpKind kind, const std::string& node_name,
                           const Attrs& attrs, const std::vector<ValueId>& inputs) {
  Checker c{graph, kind, node_name, inputs};
  for (ValueId v : inputs)
    if (v < 0 || static_cast<std::size_t>(v) >= graph.values().size())
      c.bad(fmt::format("refers to an unknown value id {}", v));

  switch (kind) {
    case OpKind::Linear: {
      const auto& a = std::get<LinearAttrs>(attrs);
      c.arity(a.bias ? 3 : 2, a.bias ? 3 : 2);
      c.rank(0, 2, "batch x features");
      c.dtype(0, DType::F32);
      const auto width = c.in(0).shape[1];
      if (width != a.in_features)
        c.bad(fmt::format("input width {} does not match in_features {}; the previous layer must "
                          "produce {} features",
                          width, a.in_features, a.in_features));
      c.shape_is(1, {a.out_features, a.in_features});
      if (a.bias) c.shape_is(2, {a.out_features});
      return {{c.in(0).shape[0], a.out_features}, DType::F32};
    }
    case OpKind::Conv2d: {
      const auto& a = std::get<Conv2dAttrs>(attrs);
      c.arity(a.bias ? 3 : 2, a.bias ? 3 : 2);
      c.rank(0, 4, "N x C x H x W");
      const auto& x = c.in(0).shape;
      if (a.groups <= 0 || a.in_channels % a.groups || a.out_channels % a.groups)
        c.bad(fmt::format("groups={} must divide in_channels={} and out_channels={}", a.groups,
                          a.in_channels, a.out_channels));
      if (x[1] != a.in_channels)
        c.bad(fmt::format("input has {} channels, expected in_channels {}", x[1], a.in_channels));
      if (a.stride_h <= 0 || a.stride_w <= 0 || a.dilation_h <= 0 || a.dilation_w <= 0 ||
          a.pad_h < 0 || a.pad_w < 0 || a.kernel_h <= 0 || a.kernel_w <= 0)
        c.bad("kernel, stride and dilation must be positive and padding non-negative");
      c.shape_is(1, {a.out_channels, a.in_channels / a.groups, a.kernel_h, a.kernel_w});
      if (a.bias) c.shape_is(2, {a.out_channels});
      const auto oh = window_output_size(x[2], a.kernel_h, a.stride_h, a.pad_h, a.dilation_h);
      const auto ow = window_output_size(x[3], a.kernel_w, a.stride_w, a.pad_w, a.dilation_w);
      if (oh <= 0 || ow <= 0)
        c.bad(fmt::format("input {}x{} is smaller than the kernel; use a larger input", x[2],
                          x[3]));
      return {{x[0], a.out_channels, oh, ow}, DType::F32};
    }
    case OpKind::BatchNorm2d: {
      const auto& a = std::get<BatchNormAttrs>(attrs);
      c.arity(5, 5);
      c.rank(0, 4, "N x C x H x W");
      if (c.in(0).shape[1] != a.channels)
        c.bad(fmt::format("input has {} channels, expected {}", c.in(0).shape[1], a.channels));
      for (std::size_t i = 1; i < 5; ++i) c.shape_is(i, {a.channels});
      return {c.in(0).shape, DType::F32};
    }
    case OpKind::ReLU:
    case OpKind::ReLU6:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::Dropout:
      c.arity(1, 1);
      c.dtype(0, DType::F32);
      if (kind == OpKind::Dropout) {
        const float p = std::get<DropoutAttrs>(attrs).p;
        if (!(p >= 0.0f && p < 1.0f)) c.bad(fmt::format("p={} must be in [0, 1)", p));
      }
      return {c.in(0).shape, DType::F32};
    case OpKind::Softmax:
      c.arity(1, 1);
      c.rank(0, 2, "batch x classes");
      return {c.in(0).shape, DType::F32};
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d: {
      const auto& a = std::get<Pool2dAttrs>(attrs);
      c.arity(1, 1);
      c.rank(0, 4, "N x C x H x W");
      const auto& x = c.in(0).shape;
      if (a.pad_h * 2 > a.kernel_h || a.pad_w * 2 > a.kernel_w)
        c.bad("padding must be at most half the kernel size");
      const auto oh = window_output_size(x[2], a.kernel_h, a.stride_h, a.pad_h);
      const auto ow = window_output_size(x[3], a.kernel_w, a.stride_w, a.pad_w);
      if (oh <= 0 || ow <= 0)
        c.bad(fmt::format("input {}x{} is smaller than the window", x[2], x[3]));
      return {{x[0], x[1], oh, ow}, DType::F32};
    }
    case OpKind::GlobalAvgPool:
      c.arity(1, 1);
      c.rank(0, 4, "N x C x H x W");
      return {{c.in(0).shape[0], c.in(0).shape[1]}, DType::F32};
    case OpKind::Flatten: {
      c.arity(1, 1);
      const auto& x = c.in(0).shape;
      if (x.size() < 2) c.bad("input must have a batch dimension and at least one more");
      std::int64_t n = 1;
      for (std::size_t i = 1; i < x.size(); ++i) n *= x[i];
      return {{x[0], n}, c.in(0).dtype};
    }
    case OpKind::Add:
      c.arity(2, 2);
      if (c.in(0).shape != c.in(1).shape)
        c.bad(fmt::format("operands have shapes {} and {}; they must be equal",
                          shape_str(c.in(0).shape), shape_str(c.in(1).shape)));
      return {c.in(0).shape, DType::F32};
    case OpKind::Concat: {
      const auto& a = std::get<ConcatAttrs>(attrs);
      if (inputs.empty()) c.bad("needs at least one input");
      Shape out = c.in(0).shape;
      if (a.axis <= 0 || a.axis >= static_cast<int>(out.size()))
        c.bad(fmt::format("axis {} out of range for rank {}", a.axis, out.size()));
      for (std::size_t i = 1; i < inputs.size(); ++i) {
        const auto& s = c.in(i).shape;
        bool ok = s.size() == out.size();
        for (std::size_t d = 0; ok && d < s.size(); ++d)
          if (static_cast<int>(d) != a.axis && s[d] != out[d]) ok = false;
        if (!ok)
          c.bad(fmt::format("input '{}' has shape {}, incompatible with {} along axis {}",
                            c.in(i).name, shape_str(s), shape_str(c.in(0).shape), a.axis));
        out[a.axis] += s[a.axis];
      }
      return {out, DType::F32};
    }
    case OpKind::EmbeddingBag: {
      const auto& a = std::get<EmbeddingBagAttrs>(attrs);
      c.arity(a.per_sample_weights ? 4 : 3, a.per_sample_weights ? 4 : 3);
      c.dtype(0, DType::I64);
      c.dtype(1, DType::I64);
      c.rank(0, 1, "indices");
      c.rank(1, 1, "offsets, one per bag");
      if (a.num_embeddings <= 0 || a.dim <= 0) c.bad("table size and dim must be positive");
      c.shape_is(2, {a.num_embeddings, a.dim});
      if (a.per_sample_weights) c.dtype(3, DType::F32);
      return {{c.in(1).shape[0], a.dim}, DType::F32};
    }
    case OpKind::DotInteraction: {
      const auto& a = std::get<DotInteractionAttrs>(attrs);
      c.arity(static_cast<std::size_t>(a.num_sparse) + 1, static_cast<std::size_t>(a.num_sparse) + 1);
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        c.rank(i, 2, "batch x dim");
        if (c.in(i).shape[1] != a.dim)
          c.bad(fmt::format("input '{}' has width {}, expected the interaction dim {} (the "
                            "embedding width must equal the last bottom-MLP width)",
                            c.in(i).name, c.in(i).shape[1], a.dim));
      }
      return {{c.in(0).shape[0], a.dim + interaction_pairs(a.num_sparse, a.self_interaction)},
              DType::F32};
    }
    case OpKind::CrossEntropy:
      c.arity(2, 2);
      c.rank(0, 2, "batch x classes");
      c.dtype(1, DType::I64);
      c.rank(1, 1, "labels");
      return {{}, DType::F32};
    case OpKind::BCEWithLogits:
      c.arity(2, 2);
      c.dtype(1, DType::F32);
      c.shape_is(1, c.in(0).shape);
      return {{}, DType::F32};
    case OpKind::MSE: {
      const auto& a = std::get<MseAttrs>(attrs);
      c.arity(2, 2);
      if (a.one_hot_labels) {
        c.rank(0, 2, "batch x classes");
        c.dtype(1, DType::I64);
        c.rank(1, 1, "labels");
      } else {
        c.dtype(1, DType::F32);
        c.shape_is(1, c.in(0).shape);
      }
      return {{}, DType::F32};
    }
  }
  c.bad("unknown op");
}

}  // namespace telar::graph
