#include "graph/builder.hpp"

#include <fmt/format.h>

#include <cmath>

namespace telar::graph {

std::string GraphBuilder::unique(const std::string& requested, const char* prefix) {
  if (!requested.empty()) return requested;
  while (true) {
    std::string name = fmt::format("{}{}", prefix, ++counters_[prefix]);
    if (!graph_.find_node(name) && !graph_.find_value(name)) return name;
  }
}

ValueId GraphBuilder::input(const std::string& name, Shape shape, DType dtype) {
  shape.insert(shape.begin(), kBatchDim);
  return graph_.add_input(name, std::move(shape), dtype);
}

ValueId GraphBuilder::dynamic_input(const std::string& name, DType dtype) {
  return graph_.add_input(name, {kDynamicDim}, dtype);
}

ValueId GraphBuilder::linear(ValueId x, std::int64_t out, const std::string& name, bool bias,
                             std::int64_t in_features) {
  const std::string n = unique(name, "fc");
  const auto& s = shape(x);
  const std::int64_t in = in_features > 0 ? in_features : (s.size() >= 2 ? s.back() : -1);
  const float bound = in > 0 ? 1.0f / std::sqrt(static_cast<float>(in)) : 0.0f;
  std::vector<ValueId> inputs{x, graph_.add_parameter(n + ".weight", {out, std::max<std::int64_t>(in, 1)},
                                                      Initializer::uniform(-bound, bound))};
  if (bias) inputs.push_back(graph_.add_parameter(n + ".bias", {out}, Initializer::uniform(-bound, bound)));
  return graph_.add_node(OpKind::Linear, n, LinearAttrs{in, out, bias, {}}, std::move(inputs));
}

ValueId GraphBuilder::conv2d(ValueId x, std::int64_t out_channels, std::int64_t kernel,
                             std::int64_t stride, std::int64_t pad, std::int64_t groups, bool bias,
                             const std::string& name, std::int64_t dilation) {
  Conv2dAttrs a;
  a.in_channels = shape(x).size() == 4 ? shape(x)[1] : -1;
  a.out_channels = out_channels;
  a.kernel_h = a.kernel_w = kernel;
  a.stride_h = a.stride_w = stride;
  a.pad_h = a.pad_w = pad;
  a.dilation_h = a.dilation_w = dilation;
  a.groups = groups;
  a.bias = bias;
  return conv2d(x, a, name);
}

ValueId GraphBuilder::conv2d(ValueId x, const Conv2dAttrs& a, const std::string& name) {
  const std::string n = unique(name, "conv");
  const std::int64_t cin_g = a.groups > 0 ? std::max<std::int64_t>(a.in_channels / a.groups, 1) : 1;
  const float fan_in = static_cast<float>(cin_g * a.kernel_h * a.kernel_w);
  const float bound = 1.0f / std::sqrt(fan_in);
  std::vector<ValueId> inputs{
      x, graph_.add_parameter(n + ".weight", {a.out_channels, cin_g, a.kernel_h, a.kernel_w},
                              Initializer::uniform(-bound, bound))};
  if (a.bias)
    inputs.push_back(
        graph_.add_parameter(n + ".bias", {a.out_channels}, Initializer::uniform(-bound, bound)));
  return graph_.add_node(OpKind::Conv2d, n, a, std::move(inputs));
}

ValueId GraphBuilder::batchnorm2d(ValueId x, const std::string& name) {
  const std::string n = unique(name, "bn");
  const std::int64_t c = shape(x).size() == 4 ? shape(x)[1] : 1;
  std::vector<ValueId> inputs{x, graph_.add_parameter(n + ".weight", {c}, Initializer::ones()),
                              graph_.add_parameter(n + ".bias", {c}, Initializer::zeros()),
                              graph_.add_buffer(n + ".running_mean", {c}, Initializer::zeros()),
                              graph_.add_buffer(n + ".running_var", {c}, Initializer::ones())};
  return graph_.add_node(OpKind::BatchNorm2d, n, BatchNormAttrs{c, 1e-5f, 0.1f, {}},
                         std::move(inputs));
}

ValueId GraphBuilder::relu(ValueId x, const std::string& name) {
  return graph_.add_node(OpKind::ReLU, unique(name, "relu"), {}, {x});
}
ValueId GraphBuilder::relu6(ValueId x, const std::string& name) {
  return graph_.add_node(OpKind::ReLU6, unique(name, "relu6_"), {}, {x});
}
ValueId GraphBuilder::sigmoid(ValueId x, const std::string& name) {
  return graph_.add_node(OpKind::Sigmoid, unique(name, "sigmoid"), {}, {x});
}
ValueId GraphBuilder::tanh(ValueId x, const std::string& name) {
  return graph_.add_node(OpKind::Tanh, unique(name, "tanh"), {}, {x});
}
ValueId GraphBuilder::softmax(ValueId x, const std::string& name) {
  return graph_.add_node(OpKind::Softmax, unique(name, "softmax"), {}, {x});
}

ValueId GraphBuilder::maxpool2d(ValueId x, std::int64_t k, std::int64_t s, std::int64_t p,
                                const std::string& name) {
  return graph_.add_node(OpKind::MaxPool2d, unique(name, "maxpool"),
                         Pool2dAttrs{k, k, s, s, p, p, true, {}}, {x});
}

ValueId GraphBuilder::avgpool2d(ValueId x, std::int64_t k, std::int64_t s, std::int64_t p,
                                const std::string& name) {
  return graph_.add_node(OpKind::AvgPool2d, unique(name, "avgpool"),
                         Pool2dAttrs{k, k, s, s, p, p, true, {}}, {x});
}

ValueId GraphBuilder::global_avgpool(ValueId x, const std::string& name) {
  return graph_.add_node(OpKind::GlobalAvgPool, unique(name, "gap"), {}, {x});
}
ValueId GraphBuilder::flatten(ValueId x, const std::string& name) {
  return graph_.add_node(OpKind::Flatten, unique(name, "flatten"), {}, {x});
}
ValueId GraphBuilder::dropout(ValueId x, float p, const std::string& name) {
  return graph_.add_node(OpKind::Dropout, unique(name, "dropout"), DropoutAttrs{p}, {x});
}
ValueId GraphBuilder::add(ValueId a, ValueId b, const std::string& name) {
  return graph_.add_node(OpKind::Add, unique(name, "add"), {}, {a, b});
}
ValueId GraphBuilder::concat(const std::vector<ValueId>& xs, const std::string& name) {
  return graph_.add_node(OpKind::Concat, unique(name, "concat"), ConcatAttrs{1}, xs);
}

ValueId GraphBuilder::embedding_bag(ValueId indices, ValueId offsets, std::int64_t rows,
                                    std::int64_t dim, EmbeddingBagMode mode,
                                    const std::string& name, ValueId per_sample_weights) {
  const std::string n = unique(name, "emb");
  const float bound = rows > 0 ? std::sqrt(1.0f / static_cast<float>(rows)) : 0.0f;
  std::vector<ValueId> inputs{indices, offsets,
                              graph_.add_parameter(n + ".weight", {std::max<std::int64_t>(rows, 1), std::max<std::int64_t>(dim, 1)},
                                                   Initializer::uniform(-bound, bound))};
  if (per_sample_weights != kNoValue) inputs.push_back(per_sample_weights);
  return graph_.add_node(OpKind::EmbeddingBag, n,
                         EmbeddingBagAttrs{rows, dim, mode, per_sample_weights != kNoValue},
                         std::move(inputs));
}

ValueId GraphBuilder::dot_interaction(ValueId dense, const std::vector<ValueId>& embeddings,
                                      bool self_interaction, const std::string& name) {
  std::vector<ValueId> inputs{dense};
  inputs.insert(inputs.end(), embeddings.begin(), embeddings.end());
  const auto& s = shape(dense);
  DotInteractionAttrs a{static_cast<std::int64_t>(embeddings.size()), s.size() == 2 ? s[1] : -1,
                        self_interaction};
  return graph_.add_node(OpKind::DotInteraction, unique(name, "interaction"), a, std::move(inputs));
}

}  // namespace telar::graph
