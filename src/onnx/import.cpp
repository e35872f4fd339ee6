#include "onnx/import.hpp"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "core/error.hpp"

namespace telar::onnx {

namespace proto = ::onnx;
namespace fs = std::filesystem;
using graph::OpKind;
using graph::ValueId;

bool is_onnx_file(std::string_view model) {
  return model.size() > 5 && model.substr(model.size() - 5) == ".onnx";
}

namespace {

// A tensor whose value is known while importing: an initializer, a Constant, or what folding
// made of them. Floats for weights, integers for shapes and indices.
struct Constant {
  std::vector<std::int64_t> dims;
  bool integer = false;
  std::vector<float> f;
  std::vector<std::int64_t> i;
  bool batch = false;  // derived from the input's shape, whose batch size is not known here

  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto d : dims) n *= d;
    return n;
  }
  std::vector<std::int64_t> ints() const {
    if (integer) return i;
    std::vector<std::int64_t> out;
    for (float v : f) out.push_back(static_cast<std::int64_t>(v));
    return out;
  }
  float scalar() const { return integer ? static_cast<float>(i.at(0)) : f.at(0); }
};

std::string type_name(int t) {
  static const std::map<int, std::string> names = {
      {proto::TensorProto::FLOAT, "float32"},   {proto::TensorProto::DOUBLE, "float64"},
      {proto::TensorProto::FLOAT16, "float16"}, {proto::TensorProto::BFLOAT16, "bfloat16"},
      {proto::TensorProto::INT64, "int64"},     {proto::TensorProto::INT32, "int32"},
      {proto::TensorProto::INT8, "int8"},       {proto::TensorProto::UINT8, "uint8"},
      {proto::TensorProto::BOOL, "bool"}};
  const auto it = names.find(t);
  return it == names.end() ? "another type" : it->second;
}

// The values of `t`, stored as `Stored`: little-endian in raw_data, or in the typed field.
template <typename Stored, typename Field, typename Out>
void decode(const proto::TensorProto& t, const Field& field, std::vector<Out>& out,
            const Constant& c) {
  const std::int64_t n = c.numel();
  const std::string& raw = t.raw_data();
  const std::int64_t have =
      raw.empty() ? field.size() : static_cast<std::int64_t>(raw.size() / sizeof(Stored));
  require(have == n && raw.size() % sizeof(Stored) == 0,
          "tensor '{}' has dims [{}] ({} values) but holds {} values ({} bytes); the file is "
          "damaged or was written wrongly",
          t.name(), fmt::join(c.dims, ", "), n, have, raw.size());
  out.resize(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) {
    Stored v;
    if (raw.empty()) {
      v = field.Get(static_cast<int>(k));
    } else {
      std::memcpy(&v, raw.data() + k * static_cast<std::int64_t>(sizeof(Stored)), sizeof(Stored));
    }
    out[static_cast<std::size_t>(k)] = static_cast<Out>(v);
  }
}

Constant read_tensor(const proto::TensorProto& t, const fs::path& dir) {
  Constant c;
  c.dims.assign(t.dims().begin(), t.dims().end());
  for (auto d : c.dims)
    require(d >= 0, "tensor '{}' has a negative dimension {}; the file is damaged", t.name(), d);
  if (t.data_location() == proto::TensorProto::EXTERNAL) {
    std::string location;
    for (const auto& e : t.external_data())
      if (e.key() == "location") location = e.value();
    const fs::path file = dir / location;
    require(!location.empty() && fs::is_regular_file(file),
            "tensor '{}' keeps its data in an external file '{}', which is missing; put it beside "
            "the .onnx file (or export with the weights inside the file)",
            t.name(), file.string());
    fail(
        "tensor '{}' keeps its data in the external file '{}'; telar reads weights stored in the "
        ".onnx file itself: re-save it with onnx.save(model, path, save_as_external_data=False)",
        t.name(), file.string());
  }
  switch (t.data_type()) {
    case proto::TensorProto::FLOAT:
      decode<float>(t, t.float_data(), c.f, c);
      return c;
    case proto::TensorProto::DOUBLE:
      decode<double>(t, t.double_data(), c.f, c);
      return c;
    case proto::TensorProto::INT64:
      c.integer = true;
      decode<std::int64_t>(t, t.int64_data(), c.i, c);
      return c;
    case proto::TensorProto::INT32:
      c.integer = true;
      decode<std::int32_t>(t, t.int32_data(), c.i, c);
      return c;
    default:
      fail(
          "tensor '{}' is {}; telar imports float32 weights and int64/int32 shapes: export the "
          "model in float32",
          t.name(), type_name(t.data_type()));
  }
}

// Reads the node's attributes and says which were not used, so that an attribute telar would
// silently ignore is an error.
class Attributes {
 public:
  explicit Attributes(const proto::NodeProto& node) : node_(node) {
    for (const auto& a : node.attribute()) by_name_[a.name()] = &a;
  }
  bool has(const std::string& name) const { return by_name_.count(name) > 0; }
  std::int64_t i(const std::string& name, std::int64_t fallback) {
    const auto* a = take(name);
    return a ? a->i() : fallback;
  }
  float f(const std::string& name, float fallback) {
    const auto* a = take(name);
    return a ? a->f() : fallback;
  }
  std::string s(const std::string& name, const std::string& fallback) {
    const auto* a = take(name);
    return a ? a->s() : fallback;
  }
  std::vector<std::int64_t> ints(const std::string& name, std::vector<std::int64_t> fallback) {
    const auto* a = take(name);
    return a ? std::vector<std::int64_t>(a->ints().begin(), a->ints().end()) : fallback;
  }
  const proto::TensorProto* tensor(const std::string& name) {
    const auto* a = take(name);
    return a ? &a->t() : nullptr;
  }
  // Fails for an attribute no rule read.
  void all_used() const {
    for (const auto& [name, a] : by_name_)
      if (!used_.count(name))
        fail("node '{}' ({}): attribute '{}' is not supported by telar's ONNX import", node_.name(),
             node_.op_type(), name);
  }

 private:
  const proto::AttributeProto* take(const std::string& name) {
    auto it = by_name_.find(name);
    if (it == by_name_.end()) return nullptr;
    used_.insert(name);
    return it->second;
  }
  const proto::NodeProto& node_;
  std::map<std::string, const proto::AttributeProto*> by_name_;
  std::set<std::string> used_;
};

class Importer {
 public:
  Importer(const proto::ModelProto& model, int opset, const fs::path& dir,
           const ImportOptions& options)
      : model_(model), opset_(opset), dir_(dir), options_(options), graph_(graph_name(model)) {}

  ImportedModel run() {
    const auto& g = model_.graph();
    for (const auto& t : g.initializer()) constants_[t.name()] = read_tensor(t, dir_);
    add_inputs();
    for (const auto& node : g.node()) import_node(node);
    require(g.output_size() > 0, "the model has no outputs");
    for (const auto& out : g.output()) {
      require(values_.count(out.name()),
              "output '{}' is not computed from the input (a constant output); telar needs "
              "outputs that depend on the model's input",
              out.name());
      graph_.add_output(values_.at(out.name()));
    }
    ImportedModel m{std::move(graph_), std::move(weights_), opset_, producer(model_)};
    return m;
  }

  static int opset_of(const proto::ModelProto& model) {
    int opset = 0;
    for (const auto& o : model.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") opset = static_cast<int>(o.version());
    return opset;
  }

 private:
  static std::string graph_name(const proto::ModelProto& model) {
    return model.graph().name().empty() ? "onnx" : model.graph().name();
  }
  static std::string producer(const proto::ModelProto& model) {
    std::string p = model.producer_name();
    if (!model.producer_version().empty()) p += " " + model.producer_version();
    return p;
  }

  void add_inputs() {
    int count = 0;
    for (const auto& in : model_.graph().input()) {
      if (constants_.count(in.name())) continue;  // older exporters list initializers as inputs
      ++count;
      require(in.type().has_tensor_type(), "input '{}' is not a tensor", in.name());
      const auto& tt = in.type().tensor_type();
      require(tt.elem_type() == proto::TensorProto::FLOAT,
              "input '{}' is {}; telar feeds float32 inputs", in.name(), type_name(tt.elem_type()));
      Shape shape;
      for (const auto& d : tt.shape().dim())
        shape.push_back(d.has_dim_value() && d.dim_value() > 0 ? d.dim_value() : -1);
      require(shape.size() >= 2, "input '{}' has rank {}; telar needs a batch dimension and more",
              in.name(), shape.size());
      shape[0] = kBatchDim;  // the first dimension is the batch, whatever it was exported with
      if (options_.input) {
        require(options_.input->size() + 1 == shape.size(),
                "--input {} has {} dimensions; input '{}' has {} besides the batch",
                shape_str(*options_.input), options_.input->size(), in.name(), shape.size() - 1);
        for (std::size_t k = 1; k < shape.size(); ++k) {
          const auto given = (*options_.input)[k - 1];
          require(shape[k] == -1 || shape[k] == given,
                  "--input {}: input '{}' is fixed at {} in the file", shape_str(*options_.input),
                  in.name(), shape_str(shape));
          shape[k] = given;
        }
      } else {
        bool rest_dynamic = false;
        for (std::size_t k = 1; k < shape.size(); ++k) rest_dynamic = rest_dynamic || shape[k] < 0;
        require(!rest_dynamic,
                "input '{}' has a dynamic shape {}; give its size without the batch with --input, "
                "e.g. --input 3x224x224",
                in.name(), shape_str(shape));
      }
      values_[in.name()] = graph_.add_input(in.name(), shape, DType::F32);
    }
    require(count == 1, "the model has {} inputs; telar imports models with one input", count);
  }

  // --- helpers over a node's inputs ---
  bool known(const std::string& name) const { return constants_.count(name) > 0; }
  bool present(const proto::NodeProto& n, int k) const {
    return n.input_size() > k && !n.input(k).empty();
  }
  ValueId dynamic(const proto::NodeProto& n, int k) const {
    require(present(n, k), "node '{}' ({}): input {} is missing", n.name(), n.op_type(), k);
    auto it = values_.find(n.input(k));
    if (it != values_.end()) return it->second;
    if (known(n.input(k)))
      fail(
          "node '{}' ({}): input '{}' is a constant where telar needs a tensor computed from the "
          "model's input",
          n.name(), n.op_type(), n.input(k));
    fail(
        "node '{}' ({}): input '{}' is not defined by any earlier node, initializer or graph "
        "input (the graph is not topologically sorted, or has a cycle)",
        n.name(), n.op_type(), n.input(k));
  }
  // `batch_ok`: the caller uses no element that depends on the batch size (a Reshape's first).
  const Constant& constant(const proto::NodeProto& n, int k, bool batch_ok = false) const {
    require(present(n, k), "node '{}' ({}): input {} is missing", n.name(), n.op_type(), k);
    auto it = constants_.find(n.input(k));
    if (it == constants_.end())
      fail(
          "node '{}' ({}): input '{}' must be a constant (an initializer or a folded subgraph) "
          "for telar",
          n.name(), n.op_type(), n.input(k));
    if (it->second.batch && !batch_ok)
      fail(
          "node '{}' ({}): input '{}' depends on the batch size, which telar binds at run time; "
          "export with a fixed computation (e.g. torch.flatten(x, 1) instead of "
          "x.view(x.size(0), ...) where it is not a reshape)",
          n.name(), n.op_type(), n.input(k));
    return it->second;
  }
  const Shape& shape_of(ValueId v) const { return graph_.value(v).shape; }
  std::string node_name(const proto::NodeProto& n) const {
    return n.name().empty() ? fmt::format("{}_{}", n.op_type(), graph_.nodes().size()) : n.name();
  }
  void define(const proto::NodeProto& n, ValueId v) {
    require(n.output_size() >= 1, "node '{}' ({}) has no output", n.name(), n.op_type());
    values_[n.output(0)] = v;
  }
  // A parameter (or, with `buffer`, a running statistic) holding `c`, named after the ONNX tensor.
  ValueId weight(const std::string& name, const Constant& c, Shape shape, bool buffer = false) {
    require(!c.integer, "tensor '{}' is an integer tensor where telar needs float weights", name);
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    require(n == c.numel(), "tensor '{}' has {} values; telar expected shape {}", name, c.numel(),
            shape_str(shape));
    std::string unique = name;
    for (int k = 2; graph_.find_value(unique); ++k) unique = fmt::format("{}#{}", name, k);
    const ValueId id = buffer ? graph_.add_buffer(unique, shape, graph::Initializer::zeros())
                              : graph_.add_parameter(unique, shape, graph::Initializer::zeros());
    weights_.set(id, Tensor::from(c.f, shape));
    return id;
  }
  void unsupported(const proto::NodeProto& n, const std::string& what) const {
    fail("node '{}' ({}): {}", n.name(), n.op_type(), what);
  }

  // --- the ops ---
  void import_node(const proto::NodeProto& n) {
    const std::string& op = n.op_type();
    if (!n.domain().empty() && n.domain() != "ai.onnx")
      unsupported(n, fmt::format("the domain '{}' is not supported (only the standard ONNX ops)",
                                 n.domain()));
    Attributes at(n);
    if (fold_constant(n, at)) {
      at.all_used();
      return;
    }
    if (op == "Conv") {
      conv(n, at);
    } else if (op == "Gemm") {
      gemm(n, at);
    } else if (op == "MatMul") {
      const Constant& w = constant(n, 1);
      const ValueId x = dynamic(n, 0);
      if (w.dims.size() != 2 || shape_of(x).size() != 2)
        unsupported(n, "telar imports MatMul of a [batch, K] tensor by a constant [K, N] matrix");
      linear(n, x, transpose(w, n.input(1)), w.dims[1], w.dims[0], nullptr, 1.0f, 1.0f);
    } else if (op == "BatchNormalization") {
      batchnorm(n, at);
    } else if (op == "Relu" || op == "Sigmoid" || op == "Tanh") {
      const OpKind kind = op == "Relu"      ? OpKind::ReLU
                          : op == "Sigmoid" ? OpKind::Sigmoid
                                            : OpKind::Tanh;
      define(n, graph_.add_node(kind, node_name(n), {}, {dynamic(n, 0)}));
    } else if (op == "Clip") {
      clip(n, at);
    } else if (op == "Softmax") {
      const ValueId x = dynamic(n, 0);
      const auto rank = static_cast<std::int64_t>(shape_of(x).size());
      const std::int64_t axis = at.i("axis", opset_ >= 13 ? -1 : 1);
      if (rank != 2 || (axis != 1 && axis != -1))
        unsupported(n, "telar imports Softmax over the last axis of a [batch, classes] tensor");
      define(n, graph_.add_node(OpKind::Softmax, node_name(n), {}, {x}));
    } else if (op == "MaxPool" || op == "AveragePool") {
      pool(n, at);
    } else if (op == "GlobalAveragePool") {
      const ValueId x = dynamic(n, 0);
      if (shape_of(x).size() != 4)
        unsupported(n, "telar imports GlobalAveragePool of NCHW tensors");
      define(n, graph_.add_node(OpKind::GlobalAvgPool, node_name(n), {}, {x}));
      squeezed_.insert(n.output(0));  // [B, C] in telar, [B, C, 1, 1] in the file
    } else if (op == "Flatten" || op == "Reshape") {
      flatten(n, at);
    } else if (op == "Dropout" || op == "Identity") {
      if (op == "Dropout") {
        at.f("ratio", 0.5f);
        at.i("seed", 0);
        if (present(n, 2)) {
          const Constant& training = constant(n, 2);
          if (training.numel() == 1 && training.scalar() != 0.0f)
            unsupported(n, "a Dropout exported in training mode; export with model.eval()");
        }
      }
      define(n, dynamic(n, 0));
      if (squeezed_.count(n.input(0))) squeezed_.insert(n.output(0));
    } else if (op == "Add") {
      const ValueId a = dynamic(n, 0), b = dynamic(n, 1);
      if (shape_of(a) != shape_of(b))
        unsupported(n, fmt::format("Add of {} and {}: telar adds tensors of one shape (no "
                                   "broadcasting yet)",
                                   shape_str(shape_of(a)), shape_str(shape_of(b))));
      define(n, graph_.add_node(OpKind::Add, node_name(n), {}, {a, b}));
    } else if (op == "Concat") {
      concat(n, at);
    } else {
      unsupported(n,
                  "this op is not supported by telar's ONNX import (docs/onnx.md lists "
                  "those that are)");
    }
    at.all_used();
  }

  void conv(const proto::NodeProto& n, Attributes& at) {
    const ValueId x = dynamic(n, 0);
    const Constant& w = constant(n, 1);
    const Shape& xs = shape_of(x);
    if (xs.size() != 4 || w.dims.size() != 4)
      unsupported(n, "telar imports 2-D convolutions (NCHW input, OIHW weight)");
    graph::Conv2dAttrs a;
    a.groups = at.i("group", 1);
    a.in_channels = xs[1];
    a.out_channels = w.dims[0];
    a.kernel_h = w.dims[2];
    a.kernel_w = w.dims[3];
    const auto ks = at.ints("kernel_shape", {a.kernel_h, a.kernel_w});
    if (ks != std::vector<std::int64_t>{a.kernel_h, a.kernel_w})
      unsupported(n, "kernel_shape disagrees with the weight's shape");
    const auto st = pair(n, at, "strides", 1);
    const auto dl = pair(n, at, "dilations", 1);
    a.stride_h = st[0], a.stride_w = st[1];
    a.dilation_h = dl[0], a.dilation_w = dl[1];
    const auto pads = pads_of(n, at, xs, {a.kernel_h, a.kernel_w}, st, dl);
    a.pad_h = pads[0], a.pad_w = pads[1];
    a.bias = present(n, 2);
    if (a.groups <= 0 || xs[1] % a.groups || w.dims[1] * a.groups != xs[1])
      unsupported(n, fmt::format("group {} does not fit {} input channels and a weight of {}",
                                 a.groups, xs[1], shape_str(w.dims)));
    std::vector<ValueId> inputs{x, weight(n.input(1), w, w.dims)};
    if (a.bias) inputs.push_back(weight(n.input(2), constant(n, 2), {a.out_channels}));
    define(n, graph_.add_node(OpKind::Conv2d, node_name(n), a, std::move(inputs)));
  }

  // A 2-D attribute (strides, dilations): two positive values, `fallback` for both if absent.
  std::vector<std::int64_t> pair(const proto::NodeProto& n, Attributes& at, const std::string& name,
                                 std::int64_t fallback) {
    auto v = at.ints(name, {fallback, fallback});
    if (v.size() != 2 || v[0] <= 0 || v[1] <= 0)
      unsupported(n, fmt::format("attribute '{}' [{}] must be two positive values", name,
                                 fmt::join(v, ", ")));
    return v;
  }

  // Symmetric padding {pad_h, pad_w} from `pads` or `auto_pad`.
  std::array<std::int64_t, 2> pads_of(const proto::NodeProto& n, Attributes& at, const Shape& xs,
                                      std::array<std::int64_t, 2> kernel,
                                      const std::vector<std::int64_t>& strides,
                                      const std::vector<std::int64_t>& dilations) {
    const std::string auto_pad = at.s("auto_pad", "NOTSET");
    std::vector<std::int64_t> p = at.ints("pads", {0, 0, 0, 0});
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      for (int d = 0; d < 2; ++d) {
        const std::int64_t in = xs[2 + d], s = strides[d];
        const std::int64_t out = (in + s - 1) / s;
        const std::int64_t effective = dilations[d] * (kernel[d] - 1) + 1;
        const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * s + effective - in);
        p[d] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
        p[d + 2] = total - p[d];
      }
    } else if (auto_pad == "VALID") {
      p = {0, 0, 0, 0};
    } else if (auto_pad != "NOTSET") {
      unsupported(n, fmt::format("auto_pad '{}' is not an ONNX value", auto_pad));
    }
    if (p.size() != 4 || p[0] != p[2] || p[1] != p[3])
      unsupported(n, fmt::format("attribute 'pads' [{}]: telar supports the same padding at both "
                                 "ends of each axis (asymmetric pads are not supported yet)",
                                 fmt::join(p, ", ")));
    return {p[0], p[1]};
  }

  // `w` [r, c] -> [c, r]; `name` for the error when `w` is not a float matrix.
  static Constant transpose(const Constant& w, const std::string& name) {
    require(!w.integer, "tensor '{}' is an integer tensor where telar needs float weights", name);
    Constant t = w;
    const std::int64_t r = w.dims[0], c = w.dims[1];
    t.dims = {c, r};
    for (std::int64_t a = 0; a < r; ++a)
      for (std::int64_t b = 0; b < c; ++b) t.f[b * r + a] = w.f[a * c + b];
    return t;
  }

  void gemm(const proto::NodeProto& n, Attributes& at) {
    const ValueId x = dynamic(n, 0);
    const Constant& b = constant(n, 1);
    if (at.i("transA", 0) != 0) unsupported(n, "attribute 'transA' = 1 is not supported");
    const bool trans_b = at.i("transB", 0) != 0;
    const float alpha = at.f("alpha", 1.0f), beta = at.f("beta", 1.0f);
    if (b.dims.size() != 2 || shape_of(x).size() != 2)
      unsupported(n, "telar imports Gemm of a [batch, K] tensor by a constant matrix");
    const Constant w = trans_b ? b : transpose(b, n.input(1));  // [N, K], a Linear layer's weight
    const Constant* bias = present(n, 2) ? &constant(n, 2) : nullptr;
    linear(n, x, w, w.dims[0], w.dims[1], bias, alpha, beta);
  }

  void linear(const proto::NodeProto& n, ValueId x, Constant w, std::int64_t out, std::int64_t in,
              const Constant* bias, float alpha, float beta) {
    if (shape_of(x)[1] != in)
      unsupported(n,
                  fmt::format("the input has {} features and the weight {}", shape_of(x)[1], in));
    for (float& v : w.f) v *= alpha;
    graph::LinearAttrs a{in, out, bias != nullptr};
    std::vector<ValueId> inputs{x, weight(n.input(1), w, {out, in})};
    if (bias) {
      Constant c = *bias;
      if (c.numel() != out)
        unsupported(n, fmt::format("a bias C of {} values for {} outputs (telar adds one bias "
                                   "per output)",
                                   c.numel(), out));
      for (float& v : c.f) v *= beta;
      inputs.push_back(weight(n.input(2), c, {out}));
    }
    define(n, graph_.add_node(OpKind::Linear, node_name(n), a, std::move(inputs)));
  }

  void batchnorm(const proto::NodeProto& n, Attributes& at) {
    const ValueId x = dynamic(n, 0);
    if (shape_of(x).size() != 4) unsupported(n, "telar imports BatchNormalization of NCHW tensors");
    if (at.i("training_mode", 0) != 0 || n.output_size() > 1)
      unsupported(n,
                  "a BatchNormalization exported in training mode; export with model.eval() "
                  "(the running statistics are then the layer's)");
    at.i("spatial", 1);
    graph::BatchNormAttrs a;
    a.channels = shape_of(x)[1];
    a.eps = at.f("epsilon", 1e-5f);
    a.momentum = 1.0f - at.f("momentum", 0.9f);  // ONNX weighs the running value, PyTorch the batch
    const Shape c{a.channels};
    std::vector<ValueId> inputs{
        x, weight(n.input(1), constant(n, 1), c), weight(n.input(2), constant(n, 2), c),
        weight(n.input(3), constant(n, 3), c, true), weight(n.input(4), constant(n, 4), c, true)};
    define(n, graph_.add_node(OpKind::BatchNorm2d, node_name(n), a, std::move(inputs)));
  }

  void clip(const proto::NodeProto& n, Attributes& at) {
    float lo = at.f("min", -std::numeric_limits<float>::infinity());
    float hi = at.f("max", std::numeric_limits<float>::infinity());
    if (present(n, 1)) lo = constant(n, 1).scalar();
    if (present(n, 2)) hi = constant(n, 2).scalar();
    OpKind kind;
    if (lo == 0.0f && hi == 6.0f) {
      kind = OpKind::ReLU6;
    } else if (lo == 0.0f && std::isinf(hi) && hi > 0) {
      kind = OpKind::ReLU;
    } else {
      unsupported(n, fmt::format("Clip to [{}, {}]: telar imports Clip to [0, 6] (ReLU6) and "
                                 "[0, inf) (ReLU)",
                                 lo, hi));
    }
    define(n, graph_.add_node(kind, node_name(n), {}, {dynamic(n, 0)}));
  }

  void pool(const proto::NodeProto& n, Attributes& at) {
    const ValueId x = dynamic(n, 0);
    const Shape& xs = shape_of(x);
    if (xs.size() != 4) unsupported(n, "telar imports 2-D pooling of NCHW tensors");
    const auto k = at.ints("kernel_shape", {});
    if (k.size() != 2) unsupported(n, "attribute 'kernel_shape' must give two sizes");
    const auto st = pair(n, at, "strides", 1);
    const auto dl = pair(n, at, "dilations", 1);
    if (dl != std::vector<std::int64_t>{1, 1})
      unsupported(n, "attribute 'dilations': telar pools without dilation");
    if (at.i("ceil_mode", 0) != 0)
      unsupported(n,
                  "attribute 'ceil_mode' = 1 is not supported yet (pool with "
                  "ceil_mode=False, or pad the input)");
    if (at.i("storage_order", 0) != 0) unsupported(n, "attribute 'storage_order' = 1");
    const bool max = n.op_type() == "MaxPool";
    if (max && n.output_size() > 1 && !n.output(1).empty())
      unsupported(n, "the Indices output of MaxPool is not supported");
    graph::Pool2dAttrs a;
    a.kernel_h = k[0], a.kernel_w = k[1];
    a.stride_h = st[0], a.stride_w = st[1];
    const auto pads = pads_of(n, at, xs, {k[0], k[1]}, st, dl);
    a.pad_h = pads[0], a.pad_w = pads[1];
    a.count_include_pad = max ? true : at.i("count_include_pad", 0) != 0;
    define(n, graph_.add_node(max ? OpKind::MaxPool2d : OpKind::AvgPool2d, node_name(n), a, {x}));
  }

  // Flatten(axis 1), or a Reshape to [batch, everything else]: telar's Flatten.
  void flatten(const proto::NodeProto& n, Attributes& at) {
    const ValueId x = dynamic(n, 0);
    const Shape& xs = shape_of(x);
    std::int64_t features = 1;
    for (std::size_t d = 1; d < xs.size(); ++d) features *= xs[d];
    if (n.op_type() == "Flatten") {
      if (at.i("axis", 1) != 1) unsupported(n, "telar imports Flatten with axis 1");
    } else {
      at.i("allowzero", 0);
      const auto target = constant(n, 1, true).ints();
      const bool to_rows = target.size() == 2 && (target[1] == -1 || target[1] == features);
      if (!to_rows)
        unsupported(n, fmt::format("Reshape to [{}]: telar imports a Reshape to [batch, -1] (a "
                                   "flatten)",
                                   fmt::join(target, ", ")));
    }
    if (xs.size() == 2) {
      define(n, x);  // already [batch, features] (e.g. after telar's GlobalAvgPool)
      return;
    }
    define(n, graph_.add_node(OpKind::Flatten, node_name(n), {}, {x}));
  }

  void concat(const proto::NodeProto& n, Attributes& at) {
    std::int64_t axis = at.i("axis", 1);
    std::vector<ValueId> inputs;
    for (int k = 0; k < n.input_size(); ++k) inputs.push_back(dynamic(n, k));
    const auto rank = static_cast<std::int64_t>(shape_of(inputs[0]).size());
    if (axis < 0) axis += rank;
    if (axis != 1) unsupported(n, "telar imports Concat along the channels (axis 1)");
    graph::ConcatAttrs a;
    a.axis = 1;
    define(n, graph_.add_node(OpKind::Concat, node_name(n), a, std::move(inputs)));
  }

  // --- constant folding ---
  bool all_inputs_constant(const proto::NodeProto& n) const {
    for (int k = 0; k < n.input_size(); ++k)
      if (!n.input(k).empty() && !known(n.input(k))) return false;
    return n.input_size() > 0;
  }
  void set_constant(const proto::NodeProto& n, Constant c) {
    require(n.output_size() >= 1, "node '{}' ({}) has no output", n.name(), n.op_type());
    constants_[n.output(0)] = std::move(c);
  }
  static Constant ints(std::vector<std::int64_t> values, std::vector<std::int64_t> dims) {
    Constant c;
    c.integer = true;
    c.i = std::move(values);
    c.dims = std::move(dims);
    return c;
  }
  // The file's shape of tensor `name` (a squeezed GlobalAveragePool keeps its 1 x 1), its batch
  // size written as 1.
  std::vector<std::int64_t> file_shape(const std::string& name) const {
    std::vector<std::int64_t> s = shape_of(values_.at(name));
    s[0] = 1;
    if (squeezed_.count(name)) s.insert(s.end(), {1, 1});
    return s;
  }

  bool fold_constant(const proto::NodeProto& n, Attributes& at) {
    const std::string& op = n.op_type();
    if (op == "Constant") {
      if (const auto* t = at.tensor("value")) {
        set_constant(n, read_tensor(*t, dir_));
      } else if (at.has("value_float")) {
        Constant c;
        c.f = {at.f("value_float", 0.0f)};
        set_constant(n, c);
      } else if (at.has("value_int")) {
        set_constant(n, ints({at.i("value_int", 0)}, {}));
      } else if (at.has("value_ints")) {
        auto v = at.ints("value_ints", {});
        const auto size = static_cast<std::int64_t>(v.size());
        set_constant(n, ints(std::move(v), {size}));
      } else {
        unsupported(n, "a Constant without 'value', 'value_float', 'value_int' or 'value_ints'");
      }
      return true;
    }
    if (op == "Shape" && present(n, 0) && values_.count(n.input(0))) {
      // Marked as depending on the batch: only a Reshape's leading dimension may use it.
      auto s = file_shape(n.input(0));
      const auto rank = static_cast<std::int64_t>(s.size());
      Constant c = ints(std::move(s), {rank});
      c.batch = true;
      set_constant(n, std::move(c));
      return true;
    }
    if (!all_inputs_constant(n)) return false;
    // Folded with the batch size standing as 1; the result depends on it where an input does.
    bool batch = false;
    for (int k = 0; k < n.input_size(); ++k)
      if (present(n, k)) batch = batch || constants_.at(n.input(k)).batch;
    if (!fold_values(n, at)) return false;
    constants_.at(n.output(0)).batch = batch;
    return true;
  }

  // An input of a folded node: a constant, batch-dependent or not (fold_constant flags the
  // result).
  const Constant& folded_input(const proto::NodeProto& n, int k) const {
    return constant(n, k, true);
  }

  bool fold_values(const proto::NodeProto& n, Attributes& at) {
    const std::string& op = n.op_type();
    if (op == "Identity") {
      set_constant(n, folded_input(n, 0));
      return true;
    }
    if (op == "Cast") {
      const std::int64_t to = at.i("to", proto::TensorProto::FLOAT);
      Constant c = folded_input(n, 0);
      if (to == proto::TensorProto::FLOAT || to == proto::TensorProto::DOUBLE) {
        if (c.integer) c.f.assign(c.i.begin(), c.i.end());
        c.integer = false;
        c.i.clear();
      } else if (to == proto::TensorProto::INT64 || to == proto::TensorProto::INT32) {
        c.i = c.ints();
        c.integer = true;
        c.f.clear();
      } else {
        unsupported(n, fmt::format("a Cast of a constant to {}", type_name(static_cast<int>(to))));
      }
      set_constant(n, std::move(c));
      return true;
    }
    if (op == "Gather") {
      const Constant& data = folded_input(n, 0);
      const auto idx = folded_input(n, 1).ints();
      if (at.i("axis", 0) != 0 || data.dims.size() != 1)
        unsupported(n, "telar folds Gather of a 1-D constant along axis 0");
      Constant c = data;
      c.i.clear();
      c.f.clear();
      for (auto k : idx) {
        if (k < 0) k += data.numel();
        require(k >= 0 && k < data.numel(), "node '{}' (Gather): index out of range", n.name());
        if (data.integer)
          c.i.push_back(data.i[static_cast<std::size_t>(k)]);
        else
          c.f.push_back(data.f[static_cast<std::size_t>(k)]);
      }
      c.dims = folded_input(n, 1).dims;
      set_constant(n, std::move(c));
      return true;
    }
    if (op == "Unsqueeze" || op == "Squeeze") {
      Constant c = folded_input(n, 0);
      std::vector<std::int64_t> axes =
          present(n, 1) ? folded_input(n, 1).ints() : at.ints("axes", {});
      if (op == "Unsqueeze") {
        std::sort(axes.begin(), axes.end());
        const auto rank = static_cast<std::int64_t>(c.dims.size() + axes.size());
        for (auto a : axes) {
          if (a < 0) a += rank;
          if (a < 0 || a > static_cast<std::int64_t>(c.dims.size()))
            unsupported(n, fmt::format("axis {} is out of range for rank {}", a, rank));
          c.dims.insert(c.dims.begin() + a, 1);
        }
      } else {
        std::vector<std::int64_t> kept;
        for (std::size_t d = 0; d < c.dims.size(); ++d) {
          const bool listed =
              axes.empty() ? c.dims[d] == 1
                           : std::count(axes.begin(), axes.end(), static_cast<std::int64_t>(d)) > 0;
          if (!listed) kept.push_back(c.dims[d]);
        }
        c.dims = kept;
      }
      set_constant(n, std::move(c));
      return true;
    }
    if (op == "Concat") {
      at.i("axis", 0);
      Constant c = folded_input(n, 0);
      c.dims = {c.numel()};
      for (int k = 1; k < n.input_size(); ++k) {
        const Constant& more = folded_input(n, k);
        if (more.integer != c.integer) unsupported(n, "Concat of integer and float constants");
        c.i.insert(c.i.end(), more.i.begin(), more.i.end());
        c.f.insert(c.f.end(), more.f.begin(), more.f.end());
        c.dims[0] += more.numel();
      }
      set_constant(n, std::move(c));
      return true;
    }
    return false;
  }

  const proto::ModelProto& model_;
  int opset_;
  fs::path dir_;
  ImportOptions options_;
  graph::Graph graph_;
  graph::ParameterSet weights_;
  std::map<std::string, Constant> constants_;
  std::map<std::string, ValueId> values_;
  std::set<std::string> squeezed_;  // GlobalAveragePool outputs, and what aliases them
};

}  // namespace

ImportedModel import_model(const fs::path& file, const ImportOptions& options) {
  std::error_code ec;
  require(fs::is_regular_file(file, ec), "{}: no such file (give the path of an .onnx model)",
          file.string());
  std::ifstream in(file, std::ios::binary);
  require(static_cast<bool>(in), "{}: cannot be read", file.string());
  proto::ModelProto model;
  require(model.ParseFromIstream(&in) && model.has_graph() && model.graph().node_size() > 0,
          "{}: not an ONNX model (it does not parse as one, or is truncated); export it with "
          "torch.onnx.export",
          file.string());
  const int opset = Importer::opset_of(model);
  require(opset >= kMinOpset && opset <= kMaxOpset,
          "{}: opset {} is outside the supported range {} to {}; export with "
          "torch.onnx.export(..., opset_version=13)",
          file.string(), opset, kMinOpset, kMaxOpset);
  try {
    return Importer(model, opset, file.parent_path(), options).run();
  } catch (const Error& e) {
    fail("{}: {}", file.filename().string(), e.what());
  }
}

}  // namespace telar::onnx
