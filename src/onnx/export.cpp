#include "onnx/export.hpp"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/files.hpp"
#include "onnx/import.hpp"
#include "onnx/unique_name.hpp"

namespace telar::onnx {

namespace {

namespace proto = ::onnx;
using graph::OpKind;
using graph::ValueId;

class Exporter {
 public:
  Exporter(const graph::Graph& graph, const graph::ParameterSet& weights,
           const ExportOptions& options)
      : g_(graph), weights_(weights), options_(options) {}

  proto::ModelProto run() {
    proto::ModelProto model;
    // IR 7 came with opset 13 and 14, IR 8 with 15 to 18.
    model.set_ir_version(options_.opset <= 14 ? 7 : 8);
    model.set_producer_name("telar");
    model.set_producer_version(options_.producer_version);
    auto* opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(options_.opset);
    graph_ = model.mutable_graph();
    graph_->set_name(g_.name());
    // The nodes first: one that cannot be exported is the error a user meets.
    for (ValueId id : g_.inputs()) quantize_value(id);
    for (const graph::Node& n : g_.nodes()) {
      export_node(n);
      quantize_value(n.outputs.at(0));
    }
    for (ValueId id : g_.inputs()) describe(graph_->add_input(), id);
    for (const graph::Value& v : g_.values())
      if ((v.kind == graph::ValueKind::Parameter || v.kind == graph::ValueKind::Buffer) &&
          !written_.count(v.id))
        add_weight(v);
    for (ValueId id : g_.outputs()) describe(graph_->add_output(), id);
    return model;
  }

 private:
  // The ONNX name of a value: its telar name, made unique.
  const std::string& name(ValueId id) {
    auto it = names_.find(id);
    if (it != names_.end()) return it->second;
    return names_[id] =
               unique(g_.value(id).name.empty() ? fmt::format("v{}", id) : g_.value(id).name);
  }

  // A graph input or output: float, its batch dimension named "batch".
  void describe(proto::ValueInfoProto* info, ValueId id) {
    const graph::Value& v = g_.value(id);
    require(v.dtype == DType::F32, "value '{}' is not float32; ONNX export writes float models",
            v.name);
    info->set_name(name(id));
    auto* tensor = info->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(proto::TensorProto::FLOAT);
    for (auto d : v.shape) {
      auto* dim = tensor->mutable_shape()->add_dim();
      if (d == kBatchDim)
        dim->set_dim_param("batch");
      else
        dim->set_dim_value(d);
    }
  }

  // A [out, in] weight as its transpose [in, out] (a MatMul's operand): written under the
  // weight's own name in its place where every reader is a Linear over rows, else as a copy
  // beside it (another reader wants it as it is).
  std::string weight_transposed(ValueId id) {
    if (const auto it = transposed_.find(id); it != transposed_.end()) return it->second;
    bool only_rows = true;
    for (graph::NodeId reader : g_.consumers(id)) {
      const graph::Node& r = g_.node(reader);
      only_rows = only_rows && r.kind == OpKind::Linear && r.inputs.at(1) == id &&
                  g_.value(r.inputs.at(0)).shape.size() > 2;
    }
    const Tensor& t = weights_.at(id);
    const std::int64_t rows = t.dim(0), cols = t.dim(1);
    std::vector<float> tr(static_cast<std::size_t>(t.numel()));
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c)
        tr[static_cast<std::size_t>(c * rows + r)] = t.f32()[r * cols + c];
    const std::size_t size = tr.size() * sizeof(float);
    if (!only_rows)
      return transposed_[id] = tensor(name(id) + "/transposed", proto::TensorProto::FLOAT,
                                      {cols, rows}, tr.data(), size);
    written_.insert(id);
    return transposed_[id] =
               initializer(name(id), proto::TensorProto::FLOAT, {cols, rows}, tr.data(), size);
  }

  void add_weight(const graph::Value& v) {
    const Tensor& t = weights_.at(v.id);
    initializer(name(v.id), proto::TensorProto::FLOAT, v.shape, t.raw(),
                static_cast<std::size_t>(t.numel()) * sizeof(float));
  }

  // An initializer of `type` and `dims` holding `bytes`, named after `base`.
  std::string tensor(const std::string& base, proto::TensorProto::DataType type,
                     const std::vector<std::int64_t>& dims, const void* bytes, std::size_t size) {
    return initializer(unique(base), type, dims, bytes, size);
  }
  // An initializer named `tensor_name` (claimed by the caller).
  std::string initializer(const std::string& tensor_name, proto::TensorProto::DataType type,
                          const std::vector<std::int64_t>& dims, const void* bytes,
                          std::size_t size) {
    auto* init = graph_->add_initializer();
    init->set_name(tensor_name);
    init->set_data_type(type);
    for (auto d : dims) init->add_dims(d);
    init->set_raw_data(std::string(static_cast<const char*>(bytes), size));
    return init->name();
  }

  // A constant input of one node: an initializer named after the node.
  std::string ints(const std::string& name, const std::vector<std::int64_t>& values) {
    return tensor(name, proto::TensorProto::INT64, {static_cast<std::int64_t>(values.size())},
                  values.data(), values.size() * sizeof(std::int64_t));
  }
  std::string scalar(const std::string& name, float value) {
    return tensor(name, proto::TensorProto::FLOAT, {}, &value, sizeof value);
  }
  // A constant of the computation as a Constant node's output, as PyTorch writes GELU's: import
  // keeps it fixed, where an initializer operand of arithmetic becomes a trainable weight.
  std::string constant_scalar(const std::string& base, float value) {
    const std::string out = unique(base);
    auto* a = add("Constant", out, {}, out)->add_attribute();
    a->set_name("value");
    a->set_type(proto::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(proto::TensorProto::FLOAT);
    a->mutable_t()->set_raw_data(std::string(reinterpret_cast<const char*>(&value), sizeof value));
    return out;
  }
  // `base`, made unique among the file's tensor names, and claimed.
  std::string unique(const std::string& base) {
    std::string n = unique_name(base, [&](const std::string& v) { return used_.count(v) > 0; });
    used_.insert(n);
    return n;
  }

  proto::NodeProto* add(const std::string& op, const std::string& node_name,
                        std::vector<std::string> inputs, const std::string& output) {
    auto* n = graph_->add_node();
    n->set_op_type(op);
    n->set_name(node_name);
    for (auto& i : inputs) n->add_input(i);
    n->add_output(output);
    return n;
  }
  static void set(proto::NodeProto* n, const std::string& attr, std::int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(attr);
    a->set_type(proto::AttributeProto::INT);
    a->set_i(v);
  }
  static void set(proto::NodeProto* n, const std::string& attr, float v) {
    auto* a = n->add_attribute();
    a->set_name(attr);
    a->set_type(proto::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void set(proto::NodeProto* n, const std::string& attr, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(attr);
    a->set_type(proto::AttributeProto::STRING);
    a->set_s(v);
  }
  static void set(proto::NodeProto* n, const std::string& attr,
                  const std::vector<std::int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(attr);
    a->set_type(proto::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }

  // A 1-D shape computed in the file: `input`'s first `kept` dimensions (the batch's among them,
  // so it stays dynamic) followed by `rest`. Returns its name.
  std::string shape_from(const std::string& base, const std::string& input, std::int64_t kept,
                         const std::vector<std::int64_t>& rest) {
    const std::string shape = unique(base + "/shape"), leading = unique(base + "/leading"),
                      target = unique(base + "/target");
    add("Shape", shape, {input}, shape);
    add("Slice", leading, {shape, ints(base + "/start", {0}), ints(base + "/end", {kept})},
        leading);
    set(add("Concat", target, {leading, ints(base + "/rest", rest)}, target), "axis",
        std::int64_t{0});
    return target;
  }

  // A node's inputs: a quantized value as its DequantizeLinear's output, except for a node
  // kept in fp32.
  std::vector<std::string> inputs_of(const graph::Node& n) {
    const bool fp32 = options_.fp32_nodes.count(n.name) > 0;
    std::vector<std::string> in;
    for (ValueId id : n.inputs) {
      const auto dq = dequantized_.find(id);
      in.push_back(dq != dequantized_.end() && !fp32 ? dq->second : name(id));
    }
    return in;
  }

  // The int8 encoding of a value by its telar name (QDQ export), or nullptr.
  const graph::Int8Encoding* encoding_named(const std::string& value) const {
    const auto it = options_.int8.find(value);
    return it != options_.int8.end() && it->second.scale > 0.0f ? &it->second : nullptr;
  }
  const graph::Int8Encoding* encoding_of(ValueId id) const {
    return encoding_named(g_.value(id).name);
  }

  // QDQ export: an encoded value (the model's input, a node's output other than a Linear's,
  // which stays float as in telar's int8 kernels) followed by QuantizeLinear and
  // DequantizeLinear; its readers read the latter.
  void quantize_value(ValueId id) {
    const graph::Int8Encoding* e = encoding_of(id);
    const graph::Value& v = g_.value(id);
    if (!e || (v.producer >= 0 && g_.node(v.producer).kind == OpKind::Linear)) return;
    dequantized_[id] = quantize_dequantize(name(id), *e);
  }

  // QuantizeLinear and DequantizeLinear of the tensor `base` with encoding `e`: the latter's
  // output name.
  std::string quantize_dequantize(const std::string& base, const graph::Int8Encoding& e) {
    const std::string scale = tensor(base + "/scale", proto::TensorProto::FLOAT, {}, &e.scale, 4);
    const std::uint8_t zero = 0;
    const std::string zero_point =
        tensor(base + "/zero_point",
               e.is_unsigned ? proto::TensorProto::UINT8 : proto::TensorProto::INT8, {}, &zero, 1);
    const std::string q = unique(base + "/quantized");
    add("QuantizeLinear", q, {base, scale, zero_point}, q);
    const std::string dq = unique(base + "/dequantized");
    add("DequantizeLinear", dq, {q, scale, zero_point}, dq);
    return dq;
  }

  // QDQ export of a Conv or Gemm whose input is quantized: its weights as int8 with one scale
  // per output channel and its bias as int32 in accumulator units, each behind a
  // DequantizeLinear; `in` takes their names.
  void quantize_weights(const graph::Node& n, std::vector<std::string>& in) {
    const graph::Int8Encoding* x = encoding_of(n.inputs.at(0));
    if (!x || options_.fp32_nodes.count(n.name)) return;
    const Tensor& w = weights_.at(n.inputs.at(1));
    const std::int64_t channels = w.dim(0), per = w.numel() / channels;
    std::vector<float> scales(static_cast<std::size_t>(channels));
    graph::weight_scales(w.f32(), channels, per, scales.data());
    std::vector<std::int8_t> q(static_cast<std::size_t>(w.numel()));
    for (std::int64_t c = 0; c < channels; ++c)
      for (std::int64_t i = 0; i < per; ++i)
        q[static_cast<std::size_t>(c * per + i)] = static_cast<std::int8_t>(
            std::clamp(std::nearbyint(w.f32()[c * per + i] / scales[static_cast<std::size_t>(c)]),
                       -127.0f, 127.0f));
    const std::string wname = name(n.inputs[1]);
    std::vector<std::int64_t> dims(w.shape().begin(), w.shape().end());
    const std::vector<std::int8_t> zeros8(scales.size(), 0);
    in[1] = dequantize(
        wname, tensor(wname + "/int8", proto::TensorProto::INT8, dims, q.data(), q.size()), scales,
        tensor(wname + "/zero_point", proto::TensorProto::INT8, {channels}, zeros8.data(),
               zeros8.size()));
    written_.insert(n.inputs[1]);
    if (n.inputs.size() < 3) return;
    const Tensor& b = weights_.at(n.inputs[2]);
    std::vector<float> bias_scales(scales.size());
    std::vector<std::int32_t> bq(scales.size()), zeros32(scales.size(), 0);
    for (std::size_t c = 0; c < scales.size(); ++c) {
      bias_scales[c] = x->scale * scales[c];
      bq[c] = static_cast<std::int32_t>(std::nearbyint(b.f32()[c] / bias_scales[c]));
    }
    const std::string bname = name(n.inputs[2]);
    in[2] = dequantize(
        bname,
        tensor(bname + "/int32", proto::TensorProto::INT32, {channels}, bq.data(), bq.size() * 4),
        bias_scales,
        tensor(bname + "/zero_point", proto::TensorProto::INT32, {channels}, zeros32.data(),
               zeros32.size() * 4));
    written_.insert(n.inputs[2]);
  }

  // DequantizeLinear of `quantized` with per-channel `scales` along axis 0: its output's name.
  std::string dequantize(const std::string& base, const std::string& quantized,
                         const std::vector<float>& scales, const std::string& zero_point) {
    const std::string scale =
        tensor(base + "/scale", proto::TensorProto::FLOAT,
               {static_cast<std::int64_t>(scales.size())}, scales.data(), scales.size() * 4);
    const std::string out = unique(base + "/dequantized");
    set(add("DequantizeLinear", out, {quantized, scale, zero_point}, out), "axis", std::int64_t{0});
    return out;
  }

  // A Conv's, Gemm's or BatchNormalization's fused post-ops as the ops they stand for: `result` is
  // the primitive's output, the sum and the activation follow, the last writing `out`. QDQ export:
  // a result added to a summand is quantized with what calibration saw there
  // ("<output>/primitive"), so that runtimes run the convolution in int8 and the Add on quantized
  // operands.
  void post_ops(const graph::Node& n, const graph::PostOps& post, const std::string& result,
                const std::vector<std::string>& in, const std::string& out) {
    std::string value = result;
    const graph::Int8Encoding* before_sum =
        encoding_named(g_.value(n.outputs.at(0)).name + "/primitive");
    if (post.sum && before_sum) value = quantize_dequantize(result, *before_sum);
    if (post.sum) {
      const std::string sum = post.activation == OpKind::Count ? out : unique(out + "/sum");
      add("Add", n.name + "/sum", {value, in.back()}, sum);
      value = sum;
    }
    if (post.activation != OpKind::Count)
      activation(post.activation, post.eltwise, n.name + "/activation", value, out);
  }
  // ReduceMean over one axis, kept (telar's); opset 18 takes the axes as an input.
  void reduce_mean(const std::string& node_name, const std::string& in, std::int64_t axis,
                   const std::string& out) {
    auto* r = options_.opset >= 18
                  ? add("ReduceMean", node_name, {in, ints(node_name + "/axes", {axis})}, out)
                  : add("ReduceMean", node_name, {in}, out);
    if (options_.opset < 18) set(r, "axes", std::vector<std::int64_t>{axis});
    set(r, "keepdims", std::int64_t{1});
  }

  // LayerNormalization came with opset 17; before it, the ops PyTorch writes for one (the square
  // as a Mul where PyTorch writes Pow, epsilon a Constant node, which import keeps fixed):
  // d = x - mean(x), y = d / sqrt(mean(d * d) + eps) * scale + bias, the means over the last
  // axis (import reads both; inference compilation fuses the second back, optimize/passes.hpp).
  void layer_norm(const graph::Node& n, const std::vector<std::string>& in,
                  const std::string& out) {
    const auto& a = n.attr<graph::LayerNormAttrs>();
    if (options_.opset >= 17) {
      auto* ln = add("LayerNormalization", n.name, in, out);
      set(ln, "axis", std::int64_t{-1});
      set(ln, "epsilon", a.eps);
      return;
    }
    const std::string& x = in[0];
    const std::string mean = unique(out + "/mean"), centred = unique(out + "/centred"),
                      square = unique(out + "/square"), variance = unique(out + "/variance"),
                      shifted = unique(out + "/variance_eps"), spread = unique(out + "/std"),
                      normalised = unique(out + "/normalised"), scaled = unique(out + "/scaled");
    reduce_mean(n.name + "/mean", x, -1, mean);
    add("Sub", n.name + "/centre", {x, mean}, centred);
    add("Mul", n.name + "/square", {centred, centred}, square);
    reduce_mean(n.name + "/variance", square, -1, variance);
    add("Add", n.name + "/epsilon", {variance, constant_scalar(out + "/eps", a.eps)}, shifted);
    add("Sqrt", n.name + "/std", {shifted}, spread);
    add("Div", n.name + "/normalise", {centred, spread}, normalised);
    add("Mul", n.name + "/scale", {normalised, in[1]}, scaled);
    add("Add", n.name, {scaled, in[2]}, out);
  }

  // The output a Conv or Gemm writes: `out` itself, or a name for its post-ops to read.
  std::string primitive_output(const graph::PostOps& post, const std::string& out) {
    return post.any() ? unique(out + "/primitive") : out;
  }

  static graph::EltwiseAttrs eltwise_of(const graph::Node& n) {
    const auto* a = std::get_if<graph::EltwiseAttrs>(&n.attrs);
    return a ? *a : graph::EltwiseAttrs{};
  }

  // An element-wise activation (also a fused post-op) from `in` to `out`.
  void activation(OpKind kind, const graph::EltwiseAttrs& a, const std::string& node_name,
                  const std::string& in, const std::string& out) {
    switch (kind) {
      case OpKind::ReLU:
        add("Relu", node_name, {in}, out);
        return;
      case OpKind::ReLU6:
        add("Clip", node_name,
            {in, scalar(node_name + "/min", 0.0f), scalar(node_name + "/max", 6.0f)}, out);
        return;
      case OpKind::Sigmoid:
        add("Sigmoid", node_name, {in}, out);
        return;
      case OpKind::Tanh:
        add("Tanh", node_name, {in}, out);
        return;
      case OpKind::LeakyReLU:
        set(add("LeakyRelu", node_name, {in}, out), "alpha", a.alpha);
        return;
      case OpKind::HardSwish:
        if (options_.opset >= 14) {
          add("HardSwish", node_name, {in}, out);
        } else {  // x * HardSigmoid(x) with PyTorch's 1/6 and 1/2, as PyTorch exports it
          const std::string gate = unique(node_name + "/gate");
          auto* hs = add("HardSigmoid", gate, {in}, gate);
          set(hs, "alpha", 1.0f / 6.0f);
          set(hs, "beta", 0.5f);
          add("Mul", node_name, {in, gate}, out);
        }
        return;
      case OpKind::SiLU: {  // x * Sigmoid(x), as PyTorch exports it
        const std::string gate = unique(node_name + "/gate");
        add("Sigmoid", gate, {in}, gate);
        add("Mul", node_name, {in, gate}, out);
        return;
      }
      case OpKind::GELU: {  // x * (Erf(x / sqrt(2)) + 1) * 0.5, as PyTorch exports it
        const std::string scaled = unique(node_name + "/scaled"), erf = unique(node_name + "/erf"),
                          gate = unique(node_name + "/gate"), gated = unique(node_name + "/gated");
        add("Div", scaled, {in, constant_scalar(node_name + "/sqrt2", std::sqrt(2.0f))}, scaled);
        add("Erf", erf, {scaled}, erf);
        add("Add", gate, {erf, constant_scalar(node_name + "/one", 1.0f)}, gate);
        add("Mul", gated, {in, gate}, gated);
        add("Mul", node_name, {gated, constant_scalar(node_name + "/half", 0.5f)}, out);
        return;
      }
      default:
        fail("internal: {} is not an activation export writes", graph::op_name(kind));
    }
  }

  // `end_h`, `end_w`: more padding at the bottom and right (a max pooling's).
  void window(proto::NodeProto* n, std::int64_t kh, std::int64_t kw, std::int64_t sh,
              std::int64_t sw, std::int64_t ph, std::int64_t pw, std::int64_t end_h = 0,
              std::int64_t end_w = 0) {
    set(n, "kernel_shape", std::vector<std::int64_t>{kh, kw});
    set(n, "strides", std::vector<std::int64_t>{sh, sw});
    set(n, "pads", std::vector<std::int64_t>{ph, pw, ph + end_h, pw + end_w});
  }

  void export_node(const graph::Node& n) {
    const std::string out = name(n.outputs.at(0));
    std::vector<std::string> in = inputs_of(n);
    switch (n.kind) {
      case OpKind::Linear: {
        const graph::PostOps& post = n.attr<graph::LinearAttrs>().post;
        const std::string result = primitive_output(post, out);
        if (g_.value(n.inputs[0]).shape.size() == 2) {
          quantize_weights(n, in);
          auto* gemm = add("Gemm", n.name, {in[0], in[1], in.size() > 2 ? in[2] : ""}, result);
          if (in.size() < 3) gemm->mutable_input()->RemoveLast();
          set(gemm, "transB", std::int64_t{1});
        } else {
          // Over rows ([B, L, in]): MatMul by the weights as [in, out], then the bias (as
          // PyTorch exports nn.Linear of such a tensor). QDQ: the int8 weights' [out, in]
          // DequantizeLinear (per output channel, axis 0) transposed.
          const std::string weight = in[1];
          quantize_weights(n, in);
          if (in[1] != weight) {
            const std::string t = unique(in[1] + "/transposed");
            set(add("Transpose", t, {in[1]}, t), "perm", std::vector<std::int64_t>{1, 0});
            in[1] = t;
          } else {
            in[1] = weight_transposed(n.inputs[1]);
          }
          const std::string product = in.size() > 2 ? unique(result + "/matmul") : result;
          add("MatMul", n.name, {in[0], in[1]}, product);
          if (in.size() > 2) add("Add", n.name + "/bias", {product, in[2]}, result);
        }
        post_ops(n, post, result, in, out);
        return;
      }
      case OpKind::Conv2d: {
        const auto& a = n.attr<graph::Conv2dAttrs>();
        quantize_weights(n, in);
        const std::string result = primitive_output(a.post, out);
        // With a fused sum the summand is the last input, not the Conv's.
        std::vector<std::string> operands(in.begin(), in.begin() + (a.bias ? 3 : 2));
        auto* conv = add("Conv", n.name, operands, result);
        window(conv, a.kernel_h, a.kernel_w, a.stride_h, a.stride_w, a.pad_h, a.pad_w);
        set(conv, "dilations", std::vector<std::int64_t>{a.dilation_h, a.dilation_w});
        set(conv, "group", a.groups);
        post_ops(n, a.post, result, in, out);
        return;
      }
      case OpKind::ConvTranspose2d: {
        const auto& a = n.attr<graph::ConvTranspose2dAttrs>();
        auto* c = add("ConvTranspose", n.name, in, out);
        window(c, a.kernel_h, a.kernel_w, a.stride_h, a.stride_w, a.pad_h, a.pad_w);
        set(c, "dilations", std::vector<std::int64_t>{a.dilation_h, a.dilation_w});
        set(c, "output_padding", std::vector<std::int64_t>{a.output_padding_h, a.output_padding_w});
        set(c, "group", a.groups);
        return;
      }
      case OpKind::BatchNorm2d: {
        const auto& a = n.attr<graph::BatchNormAttrs>();
        const std::string normalized = primitive_output(a.post, out);
        auto* bn = add("BatchNormalization", n.name, in, normalized);
        set(bn, "epsilon", a.eps);
        set(bn, "momentum", 1.0f - a.momentum);  // ONNX weighs the running value
        if (a.post.any()) post_ops(n, a.post, normalized, in, out);
        return;
      }
      case OpKind::ReLU:
      case OpKind::ReLU6:
      case OpKind::Sigmoid:
      case OpKind::Tanh:
      case OpKind::LeakyReLU:
      case OpKind::HardSwish:
      case OpKind::SiLU:
      case OpKind::GELU:
        activation(n.kind, eltwise_of(n), n.name, in[0], out);
        return;
      case OpKind::Sqrt:
        add("Sqrt", n.name, in, out);
        return;
      case OpKind::Erf:
        add("Erf", n.name, in, out);
        return;
      case OpKind::Pow:
        add("Pow", n.name,
            {in[0], scalar(n.name + "/exponent", n.attr<graph::EltwiseAttrs>().alpha)}, out);
        return;
      case OpKind::ReduceMean:
        reduce_mean(n.name, in[0], n.attr<graph::ReduceAttrs>().axis, out);
        return;
      case OpKind::LayerNorm:
        layer_norm(n, in, out);
        return;
      case OpKind::HardSigmoid: {
        auto* hs = add("HardSigmoid", n.name, in, out);
        set(hs, "alpha", n.attr<graph::EltwiseAttrs>().alpha);
        set(hs, "beta", n.attr<graph::EltwiseAttrs>().beta);
        return;
      }
      case OpKind::Softmax: set(add("Softmax", n.name, in, out), "axis", std::int64_t{-1}); return;
      case OpKind::MatMul:
        add("MatMul", n.name, in, out);
        return;
      case OpKind::Expand: {  // to [B, 1, ...]: the batch read from the first input's shape
        const std::vector<std::int64_t> ones(g_.value(n.outputs[0]).shape.size() - 1, 1);
        add("Expand", n.name, {in[1], shape_from(n.name, in[0], 1, ones)}, out);
        return;
      }
      case OpKind::MaxPool2d:
      case OpKind::AvgPool2d: {
        const auto& a = n.attr<graph::Pool2dAttrs>();
        const bool max = n.kind == OpKind::MaxPool2d;
        auto* pool = add(max ? "MaxPool" : "AveragePool", n.name, in, out);
        window(pool, a.kernel_h, a.kernel_w, a.stride_h, a.stride_w, a.pad_h, a.pad_w, a.end_pad.h,
               a.end_pad.w);
        if (!max) set(pool, "count_include_pad", std::int64_t{a.count_include_pad ? 1 : 0});
        return;
      }
      case OpKind::GlobalAvgPool: {  // telar's is [B, C]; ONNX's [B, C, 1, 1]
        const std::string pooled = unique(n.name + "/pooled");
        add("GlobalAveragePool", n.name, in, pooled);
        set(add("Flatten", n.name + "/flatten", {pooled}, out), "axis", std::int64_t{1});
        return;
      }
      case OpKind::Flatten: set(add("Flatten", n.name, in, out), "axis", std::int64_t{1}); return;
      case OpKind::Reshape: {
        std::vector<std::int64_t> shape{0};  // 0: the batch, copied from the input
        for (auto d : n.attr<graph::ReshapeAttrs>().dims) shape.push_back(d);
        add("Reshape", n.name, {in[0], ints(n.name + "/shape", shape)}, out);
        return;
      }
      case OpKind::Transpose:
        set(add("Transpose", n.name, in, out), "perm", n.attr<graph::TransposeAttrs>().perm);
        return;
      case OpKind::Slice: {
        const auto& a = n.attr<graph::SliceAttrs>();
        std::vector<std::string> inputs{in[0], ints(n.name + "/starts", {a.start}),
                                        ints(n.name + "/ends", {a.end}),
                                        ints(n.name + "/axes", {a.axis})};
        if (a.step.any()) inputs.push_back(ints(n.name + "/steps", {a.step.every}));
        add("Slice", n.name, inputs, out);
        return;
      }
      case OpKind::Pad: {
        const auto& a = n.attr<graph::PadAttrs>();
        add("Pad", n.name,
            {in[0], ints(n.name + "/pads", {0, 0, a.top, a.left, 0, 0, a.bottom, a.right}),
             scalar(n.name + "/value", a.value)},
            out);
        return;
      }
      case OpKind::Resize: {  // to [B, C, out_h, out_w]: the first two read from the input
        const auto& a = n.attr<graph::ResizeAttrs>();
        auto* resize = add("Resize", n.name,
                           {in[0], "", "", shape_from(n.name, in[0], 2, {a.out_h, a.out_w})}, out);
        const bool linear = a.mode == graph::ResizeMode::Linear;
        set(resize, "mode", std::string(linear ? "linear" : "nearest"));
        set(resize, "coordinate_transformation_mode",
            std::string(!linear           ? "asymmetric"
                        : a.align_corners ? "align_corners"
                                          : "half_pixel"));
        if (!linear) set(resize, "nearest_mode", std::string("floor"));
        return;
      }
      case OpKind::Add: add("Add", n.name, in, out); return;
      case OpKind::Sub: add("Sub", n.name, in, out); return;
      case OpKind::Mul: add("Mul", n.name, in, out); return;
      case OpKind::Div: add("Div", n.name, in, out); return;
      case OpKind::Concat:
        set(add("Concat", n.name, in, out), "axis",
            std::int64_t{n.attr<graph::ConcatAttrs>().axis});
        return;
      case OpKind::Dropout: add("Identity", n.name, in, out); return;  // inference
      default:
        fail("node '{}' ({}) has no ONNX counterpart telar exports; export a model of "
             "convolutional and dense layers (docs/onnx.md)",
             n.name, graph::op_name(n.kind));
    }
  }

  const graph::Graph& g_;
  const graph::ParameterSet& weights_;
  ExportOptions options_;
  proto::GraphProto* graph_ = nullptr;
  std::map<ValueId, std::string> names_;
  std::set<std::string> used_;
  std::map<ValueId, std::string> dequantized_;  // QDQ: a value's DequantizeLinear output
  std::set<ValueId> written_;  // weights their node wrote (int8/int32 for QDQ, transposed)
  std::map<ValueId, std::string> transposed_;  // a weight's [in, out] initializer
};

}  // namespace

void export_model(const graph::Graph& graph, const graph::ParameterSet& weights,
                  const std::filesystem::path& file, const ExportOptions& options) {
  require(options.opset >= kMinExportOpset && options.opset <= kMaxOpset,
          "--opset {}: telar exports opsets {} to {}", options.opset, kMinExportOpset, kMaxOpset);
  const proto::ModelProto model = Exporter(graph, weights, options).run();
  std::string bytes;
  require(model.SerializeToString(&bytes), "internal: the ONNX model of {} does not serialise",
          graph.name());
  write_file_atomic(file, bytes);
}

}  // namespace telar::onnx
