#include "onnx/import.hpp"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/files.hpp"
#include "onnx/axis_groups.hpp"
#include "onnx/constant.hpp"
#include "onnx/constant_folds.hpp"
#include "onnx/unique_name.hpp"

namespace telar::onnx {

namespace proto = ::onnx;
namespace fs = std::filesystem;
using graph::OpKind;
using graph::ValueId;

bool is_onnx_file(std::string_view model) {
  return model.size() > 5 && model.substr(model.size() - 5) == ".onnx";
}

namespace {

Constant zeros_of(std::int64_t n) {
  Constant c;
  c.dims = {n};
  c.f.assign(static_cast<std::size_t>(n), 0.0f);
  return c;
}

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
    require(!location.empty() && is_file(file),
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
    case proto::TensorProto::BOOL:  // a flag (Dropout's training_mode): one byte each in raw_data
      c.integer = true;
      decode<std::uint8_t>(t, t.int32_data(), c.i, c);
      return c;
    default:
      fail(
          "tensor '{}' is {}; telar imports float32 weights, int64/int32 shapes and bool flags: export the "
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

// The ONNX ops that are one telar op of no attributes over the node's first input.
const std::map<std::string, OpKind> kUnaryOps = {
    {"Relu", OpKind::ReLU}, {"Sigmoid", OpKind::Sigmoid}, {"Tanh", OpKind::Tanh},
    {"Sqrt", OpKind::Sqrt}, {"Erf", OpKind::Erf},         {"HardSwish", OpKind::HardSwish}};
// The element-wise arithmetic ops.
const std::map<std::string, OpKind> kBinaryOps = {
    {"Add", OpKind::Add}, {"Sub", OpKind::Sub}, {"Mul", OpKind::Mul}, {"Div", OpKind::Div}};

// An ONNX position along an axis of `size`: negative counts from the end; clamped to [0, size]
// (Slice's bounds, Shape's start and end).
std::int64_t clamped_index(std::int64_t v, std::int64_t size) {
  return std::clamp<std::int64_t>(v < 0 ? v + size : v, 0, size);
}

class Importer {
 public:
  Importer(const proto::ModelProto& model, int opset, const fs::path& dir,
           const ImportOptions& options)
      : model_(model), opset_(opset), dir_(dir), options_(options), graph_(graph_name(model)) {}

  ImportedModel run() {
    const auto& g = model_.graph();
    for (const auto& t : g.initializer()) {
      constants_[t.name()] = read_tensor(t, dir_);
      initializers_.insert(t.name());
    }
    add_inputs();
    for (const auto& node : g.node()) import_node(node);
    require(g.output_size() > 0, "the model has no outputs");
    for (const auto& out : g.output()) {
      if (const auto view = views_.find(out.name()); view != views_.end())
        refuse_view(view->second, fmt::format("output '{}'", out.name()));
      require(values_.count(out.name()),
              "output '{}' is not computed from the input (a constant output); telar needs "
              "outputs that depend on the model's input",
              out.name());
      graph_.add_output(values_.at(out.name()));
    }
    ImportedModel m{std::move(graph_), std::move(weights_), opset_, producer(model_),
                    std::move(fixed_)};
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
        shape.push_back(d.has_dim_value() && d.dim_value() > 0 ? d.dim_value() : kDynamicDim);
      require(shape.size() >= 2, "input '{}' has rank {}; telar needs a batch dimension and more",
              in.name(), shape.size());
      shape[0] = kBatchDim;  // the first dimension is the batch, whatever it was exported with
      if (options_.input) {
        require(options_.input->size() + 1 == shape.size(),
                "--input {} has {} dimensions; input '{}' has {} besides the batch",
                shape_str(*options_.input), options_.input->size(), in.name(), shape.size() - 1);
        for (std::size_t k = 1; k < shape.size(); ++k) {
          const auto given = (*options_.input)[k - 1];
          require(shape[k] == kDynamicDim || shape[k] == given,
                  "--input {}: input '{}' is fixed at {} in the file", shape_str(*options_.input),
                  in.name(), shape_str(shape));
          shape[k] = given;
        }
      } else {
        if (options_.dynamic_size && options_.dynamic_size->size() + 1 == shape.size())
          for (std::size_t k = 1; k < shape.size(); ++k)
            if (shape[k] == kDynamicDim) shape[k] = (*options_.dynamic_size)[k - 1];
        bool rest_dynamic = false;
        for (std::size_t k = 1; k < shape.size(); ++k) rest_dynamic = rest_dynamic || shape[k] < 0;
        require(!rest_dynamic,
                "input '{}' has a dynamic shape {}; give its size without the batch with --input, "
                "e.g. --input 3x224x224",
                in.name(), shape_str(shape));
      }
      values_[in.name()] = options_.feed ? fed_input(in.name(), shape)
                                         : graph_.add_input(in.name(), shape, DType::F32);
    }
    require(count == 1, "the model has {} inputs; telar imports models with one input", count);
  }

  // The graph's input of the feed's shape, fitted to the model's `shape` by replicating its
  // channels and padding it (centred) with zeros.
  ValueId fed_input(const std::string& name, const Shape& shape) {
    Shape model(shape.begin() + 1, shape.end());
    check_feed(*options_.feed, model);
    Shape feed{kBatchDim};
    feed.insert(feed.end(), options_.feed->begin(), options_.feed->end());
    ValueId x = graph_.add_input(name, feed, DType::F32);
    if (feed[1] != shape[1]) {
      graph::ConcatAttrs cat;
      x = graph_.add_node(OpKind::Concat, "feed/channels", cat,
                          std::vector<ValueId>(static_cast<std::size_t>(shape[1]), x));
    }
    if (feed.size() == 4 && (feed[2] != shape[2] || feed[3] != shape[3])) {
      graph::PadAttrs pad;
      pad.top = (shape[2] - feed[2]) / 2, pad.bottom = shape[2] - feed[2] - pad.top;
      pad.left = (shape[3] - feed[3]) / 2, pad.right = shape[3] - feed[3] - pad.left;
      x = graph_.add_node(OpKind::Pad, "feed/pad", pad, {x});
    }
    return x;
  }

  // --- helpers over a node's inputs ---
  bool known(const std::string& name) const { return constants_.count(name) > 0; }
  bool present(const proto::NodeProto& n, int k) const {
    return n.input_size() > k && !n.input(k).empty();
  }
  // Input k of n, computed from the model's input (not a view: refuse_view()).
  ValueId dynamic(const proto::NodeProto& n, int k) {
    require(present(n, k), "node '{}' ({}): input {} is missing", n.name(), n.op_type(), k);
    auto it = values_.find(n.input(k));
    if (it != values_.end()) return it->second;
    if (const auto view = views_.find(n.input(k)); view != views_.end())
      refuse_view(view->second,
                  fmt::format("node '{}' ({}), input '{}'", n.name(), n.op_type(), n.input(k)));
    if (known(n.input(k)))
      fail(
          "node '{}' ({}): input '{}' is a constant where telar needs a tensor computed from the "
          "model's input",
          n.name(), n.op_type(), n.input(k));
    if (auto internal = internal_.find(n.input(k)); internal != internal_.end())
      fail("node '{}' ({}): input '{}' is {}, which telar keeps to itself", n.name(), n.op_type(),
           n.input(k), internal->second);
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
    if (it->second.depends_on_batch() && !batch_ok)
      fail(
          "node '{}' ({}): input '{}' depends on the batch size, which telar binds at run time; "
          "export with a fixed computation (e.g. torch.flatten(x, 1) instead of "
          "x.view(x.size(0), ...) where it is not a reshape)",
          n.name(), n.op_type(), n.input(k));
    return it->second;
  }
  // A copy: adding a node may move the graph's values, and a reference with them.
  Shape shape_of(ValueId v) const { return graph_.value(v).shape; }
  // The name of the telar node made for n (`suffix` for a second node it makes): the ONNX
  // name, or op type and position where it has none, made unique among the graph's nodes (a
  // file telar exported may already hold a "/pad" or "/keepdims" node of that name).
  std::string node_name(const proto::NodeProto& n, const std::string& suffix = "") const {
    const std::string base =
        (n.name().empty() ? fmt::format("{}_{}", n.op_type(), graph_.nodes().size()) : n.name()) +
        suffix;
    return unique_name(base, [&](const std::string& name) { return graph_.find_node(name); });
  }
  void define(const proto::NodeProto& n, ValueId v) {
    require(n.output_size() >= 1, "node '{}' ({}) has no output", n.name(), n.op_type());
    values_[n.output(0)] = v;
  }
  // A parameter (or, with `buffer`, a running statistic) holding `c`, named after the ONNX
  // tensor; `init` initialises it when the model is trained from scratch.
  ValueId weight(const std::string& name, const Constant& c, Shape shape, graph::Initializer init,
                 bool buffer = false) {
    require(!c.integer, "tensor '{}' is an integer tensor where telar needs float weights", name);
    require(shape_numel(shape) == c.numel(), "tensor '{}' has {} values; telar expected shape {}",
            name, c.numel(), shape_str(shape));
    const std::string unique =
        unique_name(name, [&](const std::string& v) { return graph_.find_value(v); });
    const ValueId id = buffer ? graph_.add_buffer(unique, shape, init)
                              : graph_.add_parameter(unique, shape, init);
    weights_.set(id, Tensor::from(c.f, shape));
    return id;
  }
  // A constant of the computation (not a weight): a buffer, which training leaves alone and
  // --init random keeps (ImportedModel::constants).
  ValueId fixed(const std::string& name, const Constant& c, Shape shape) {
    const ValueId id = weight(name, c, std::move(shape), graph::Initializer::zeros(), true);
    fixed_.push_back(id);
    return id;
  }

  // PyTorch's default for convolution and linear layers: uniform within 1/sqrt(fan-in).
  static graph::Initializer fan_in_bound(std::int64_t fan_in) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(std::max<std::int64_t>(fan_in, 1)));
    return graph::Initializer::uniform(-bound, bound);
  }
  [[noreturn]] void unsupported(const proto::NodeProto& n, const std::string& what) const {
    fail("node '{}' ({}): {}", n.name(), n.op_type(), what);
  }
  // a * b for sizes and folded integers a file gives, refused where it overflows 64 bits.
  std::int64_t times(const proto::NodeProto& n, std::int64_t a, std::int64_t b) const {
    std::int64_t out = 0;
    if (__builtin_mul_overflow(a, b, &out))
      unsupported(n, fmt::format("{} x {} overflows 64 bits; the file is damaged", a, b));
    return out;
  }

  // --- views: tensors whose batch the file moved or merged (axis_groups.hpp) ---
  struct View {
    ValueId value;
    AxisGroups groups;
  };

  static std::string dims_str(const std::vector<SymbolicDim>& dims) {
    std::vector<std::string> parts;
    for (const auto& d : dims)
      parts.push_back(!d.batch      ? std::to_string(d.size)
                      : d.size == 1 ? std::string("B")
                                    : fmt::format("B*{}", d.size));
    return fmt::format("[{}]", fmt::join(parts, ", "));
  }
  std::string view_str(const View& v) const {
    return dims_str(view_dims(shape_of(v.value), v.groups));
  }
  bool reads_view(const proto::NodeProto& n) const {
    for (int k = 0; k < n.input_size(); ++k)
      if (present(n, k) && views_.count(n.input(k))) return true;
    return false;
  }
  // Input k as a view: a view, or a computed value as it is (each axis its own).
  View view_of(const proto::NodeProto& n, int k) {
    if (present(n, k))
      if (const auto it = views_.find(n.input(k)); it != views_.end()) return it->second;
    const ValueId v = dynamic(n, k);
    return {v, identity_groups(shape_of(v).size())};
  }
  // n's output is `v`: the value itself where the batch is alone in front (transposed and
  // merged as the file has it), a view otherwise.
  void define_view(const proto::NodeProto& n, View v) {
    require(n.output_size() >= 1, "node '{}' ({}) has no output", n.name(), n.op_type());
    v = without_ones(v, node_name(n, "/squeeze"));
    if (v.groups.at(0) != std::vector<int>{0}) {
      views_[n.output(0)] = std::move(v);
      return;
    }
    const std::string who = fmt::format("node '{}' ({})", n.name(), n.op_type());
    View r = relaid(v, flattened(v.groups), node_name(n, "/transpose"));
    std::vector<std::size_t> all;
    for (std::size_t g = 1; g < r.groups.size(); ++g) all.push_back(g);
    define(n, merged(r, all, node_name(n, "/merge"), who).value);
  }
  // `v` without the value's axes of 1 that share a file's axis with others (a Reshape's new
  // axis of 1, or a query of one token beside the batch): they order nothing.
  View without_ones(const View& v, const std::string& name) {
    const Shape xs = shape_of(v.value);
    std::vector<bool> drop(xs.size(), false);
    for (const auto& g : v.groups) {
      bool kept = false;
      for (int axis : g) {
        const auto d = static_cast<std::size_t>(axis);
        drop[d] = g.size() > 1 && axis != 0 && xs[d] == 1;
        kept = kept || !drop[d];
      }
      if (!kept) drop[static_cast<std::size_t>(g[0])] = false;  // a group of ones keeps one
    }
    if (std::find(drop.begin(), drop.end(), true) == drop.end()) return v;
    std::vector<int> into(xs.size());
    Shape dims;
    for (std::size_t d = 0; d < xs.size(); ++d) {
      into[d] = static_cast<int>(dims.size());
      if (!drop[d]) dims.push_back(xs[d]);
    }
    View r{reshaped(name, v.value, Shape(dims.begin() + 1, dims.end())), {}};
    for (const auto& g : v.groups) {
      std::vector<int> axes;
      for (int axis : g)
        if (!drop[static_cast<std::size_t>(axis)])
          axes.push_back(into[static_cast<std::size_t>(axis)]);
      r.groups.push_back(std::move(axes));
    }
    return r;
  }
  // Refuses a view read where telar needs the batch first (by `who`).
  [[noreturn]] void refuse_view(const View& v, const std::string& who) const {
    fail(
        "{}: the tensor {} holds the batch (B) off its first axis or merged with another, as "
        "PyTorch's sequence-first attention lays it out; telar follows such a tensor through "
        "Transpose, Reshape, MatMul, Gemm, Softmax, layer norms, Slice, Gather, Add/Sub/Mul/Div, "
        "Pow, Relu, Sigmoid, Tanh, Sqrt, Erf, HardSwish and Dropout until the batch is first "
        "again, which it is not here",
        who, view_str(v));
  }
  // `v` with its value transposed to `order` (the batch first).
  View relaid(const View& v, const std::vector<int>& order, const std::string& name) {
    std::vector<int> position(order.size());
    bool identity = true;
    for (std::size_t k = 0; k < order.size(); ++k) {
      position[static_cast<std::size_t>(order[k])] = static_cast<int>(k);
      identity = identity && order[k] == static_cast<int>(k);
    }
    if (identity) return v;
    graph::TransposeAttrs a;
    a.perm.assign(order.begin(), order.end());
    View r{graph_.add_node(OpKind::Transpose, name, a, {v.value}), v.groups};
    for (auto& g : r.groups)
      for (int& axis : g) axis = position[static_cast<std::size_t>(axis)];
    return r;
  }
  // `v` with each of its groups `which` (consecutive axes of its value, in order) merged into
  // one axis of the value; in the batch's group, the axes after the batch.
  View merged(const View& v, const std::vector<std::size_t>& which, const std::string& name,
              const std::string& who) {
    const Shape xs = shape_of(v.value);
    std::vector<int> into(xs.size());  // each axis's axis after the merge
    std::vector<bool> joins(xs.size(), false);
    for (std::size_t g : which) {
      const auto& axes = v.groups[g];
      for (std::size_t k = 1; k < axes.size(); ++k) {
        if (axes[k] != axes[k - 1] + 1)
          fail("{}: axes of {} that telar cannot merge", who, view_str(v));
        if (axes[0] != 0 || k > 1) joins[static_cast<std::size_t>(axes[k])] = true;
      }
    }
    Shape dims;
    for (std::size_t d = 0; d < xs.size(); ++d) {
      if (joins[d])
        dims.back() *= xs[d];
      else
        dims.push_back(xs[d]);
      into[d] = static_cast<int>(dims.size()) - 1;
    }
    if (dims.size() == xs.size()) return v;
    View r{reshaped(name, v.value, Shape(dims.begin() + 1, dims.end())), {}};
    for (const auto& g : v.groups) {
      std::vector<int> axes;
      for (int axis : g)
        if (axes.empty() || axes.back() != into[static_cast<std::size_t>(axis)])
          axes.push_back(into[static_cast<std::size_t>(axis)]);
      r.groups.push_back(std::move(axes));
    }
    return r;
  }
  // x reshaped to `dims` after the batch (a Flatten to one).
  ValueId reshaped(const std::string& name, ValueId x, Shape dims) {
    if (dims.size() == 1) return graph_.add_node(OpKind::Flatten, name, {}, {x});
    graph::ReshapeAttrs a;
    a.dims = std::move(dims);
    return graph_.add_node(OpKind::Reshape, name, a, {x});
  }
  // `v` with its last axis the value's last axis alone (where a Linear, Softmax or per-feature
  // constant works).
  View last_alone(const proto::NodeProto& n, const View& v) {
    const std::string who = fmt::format("node '{}' ({})", n.name(), n.op_type());
    const auto& last = v.groups.back();
    std::vector<int> order;
    for (int axis = 0; axis < static_cast<int>(shape_of(v.value).size()); ++axis)
      if (std::find(last.begin(), last.end(), axis) == last.end()) order.push_back(axis);
    if (order.empty() || order[0] != 0)
      unsupported(n, fmt::format("the last axis of {} holds the batch", view_str(v)));
    order.insert(order.end(), last.begin(), last.end());
    const View r = relaid(v, order, node_name(n, "/transpose"));
    return merged(r, {r.groups.size() - 1}, node_name(n, "/merge"), who);
  }

  // An op reading a view: true where it was imported as one; false leaves it to the op's own
  // import, which reads the view as a batch-first value where it is one (dynamic()).
  bool view_node(const proto::NodeProto& n, Attributes& at) {
    const std::string& op = n.op_type();
    if (op == "Transpose") {
      transpose_view(n, at);
    } else if (op == "Reshape") {
      reshape_view(n, at);
    } else if (op == "MatMul") {
      matmul_view(n);
    } else if (op == "Gemm") {
      View v = last_alone(n, view_of(n, 0));
      if (v.groups.size() != 2) unsupported(n, "Gemm of a tensor of rank other than 2");
      define_view(n, {gemm(n, at, v.value), std::move(v.groups)});
    } else if (op == "Softmax") {
      View v = view_of(n, 0);
      const std::int64_t axis = at.i("axis", opset_ >= 13 ? -1 : 1);
      const auto rank = static_cast<std::int64_t>(v.groups.size());
      if (axis != -1 && axis != rank - 1)
        unsupported(n, fmt::format("axis {} of {}: telar imports Softmax over the last axis", axis,
                                   view_str(v)));
      v = last_alone(n, v);
      define_view(n, {graph_.add_node(OpKind::Softmax, node_name(n), {}, {v.value}), v.groups});
    } else if (op == "LayerNormalization" || op == "ReduceMean") {
      // Over the last axis (a layer norm, whole or in PyTorch's nine ops), keeping it.
      View v = view_of(n, 0);
      const auto rank = static_cast<std::int64_t>(v.groups.size());
      if (op == "ReduceMean") {
        const auto axes = present(n, 1) ? constant(n, 1).ints() : at.ints("axes", {});
        at.i("noop_with_empty_axes", 0);
        if (axes.size() != 1 || (axes[0] != -1 && axes[0] != rank - 1) || at.i("keepdims", 1) == 0)
          return false;
        v = last_alone(n, v);
        const auto last = static_cast<std::int64_t>(shape_of(v.value).size()) - 1;
        define_view(n, {mean_over(node_name(n), v.value, last), v.groups});
      } else {
        v = last_alone(n, v);
        define_view(n, {layer_norm(n, at, v.value, rank), v.groups});
      }
    } else if (op == "Pow") {
      View v = view_of(n, 0);
      define_view(n, {power(n, v.value), v.groups});
    } else if (op == "Slice") {
      slice(n, at);
    } else if (op == "Gather") {
      gather_view(n, at);
    } else if (op == "Identity") {
      define_view(n, view_of(n, 0));
    } else if (op == "Dropout") {
      dropout(n, at);
    } else if (op == "Einsum") {
      einsum(n, at);
    } else if (const auto unary = kUnaryOps.find(op); unary != kUnaryOps.end()) {
      View v = view_of(n, 0);
      define_view(n, {graph_.add_node(unary->second, node_name(n), {}, {v.value}), v.groups});
    } else if (const auto kind = kBinaryOps.find(op); kind != kBinaryOps.end()) {
      return binary_view(n, kind->second);
    } else {
      return false;
    }
    return true;
  }

  void transpose_view(const proto::NodeProto& n, Attributes& at) {
    const View v = view_of(n, 0);
    const auto rank = static_cast<std::int64_t>(v.groups.size());
    std::vector<std::int64_t> perm(static_cast<std::size_t>(rank));
    for (std::int64_t d = 0; d < rank; ++d) perm[static_cast<std::size_t>(d)] = rank - 1 - d;
    perm = at.ints("perm", perm);
    std::vector<std::int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (std::int64_t d = 0; d < rank; ++d)
      if (static_cast<std::int64_t>(sorted.size()) != rank ||
          sorted[static_cast<std::size_t>(d)] != d)
        unsupported(n, fmt::format("perm [{}] is not a permutation of the {} axes of {}",
                                   fmt::join(perm, ", "), rank, view_str(v)));
    View r{v.value, {}};
    for (auto p : perm) r.groups.push_back(v.groups[static_cast<std::size_t>(p)]);
    define_view(n, std::move(r));
  }

  void reshape_view(const proto::NodeProto& n, Attributes& at) {
    const View v = view_of(n, 0);
    const Shape xs = shape_of(v.value);
    const auto in = view_dims(xs, v.groups);
    const bool allowzero = at.i("allowzero", 0) != 0;
    const Constant& t = constant(n, 1, true);
    const auto target = t.ints();
    std::vector<std::string> shown;  // the target, its batch marks shown
    for (std::size_t k = 0; k < target.size(); ++k) {
      const auto mark = t.batch_at(k);
      shown.push_back(mark == Constant::Batch::Is      ? std::string("B")
                      : mark == Constant::Batch::Times ? fmt::format("B*{}", target[k])
                      : mark == Constant::Batch::From  ? fmt::format("f(B)={}", target[k])
                                                       : std::to_string(target[k]));
    }
    const std::string what =
        fmt::format("Reshape of {} to [{}]", view_str(v), fmt::join(shown, ", "));
    std::vector<SymbolicDim> dims;
    std::int64_t known = 1, per_sample = 1;
    int batches = 0, infer_at = -1;
    for (std::size_t k = 0; k < target.size(); ++k) {
      const auto mark = t.batch_at(k);
      if (mark == Constant::Batch::From)
        unsupported(n, what + fmt::format(": dimension {} is computed from the batch size other "
                                          "than by multiplying it",
                                          k));
      SymbolicDim d{target[k], mark != Constant::Batch::No};
      if (!d.batch && d.size == 0 && !allowzero) {
        if (k >= in.size()) unsupported(n, what + ": a 0 copies a dimension the input lacks");
        d = in[k];
      }
      if (!d.batch && d.size == -1) {
        if (infer_at >= 0) unsupported(n, what + ": more than one -1");
        infer_at = static_cast<int>(k);
      } else if (d.size <= 0) {
        unsupported(n, what + ": dimensions must be positive, 0 (copy) or -1 (infer)");
      } else {
        known = times(n, known, d.size);
        batches += d.batch;
      }
      dims.push_back(d);
    }
    for (const auto& d : in) per_sample *= d.size;
    if (infer_at >= 0 && known > 0 && per_sample % known == 0 && batches <= 1)
      dims[static_cast<std::size_t>(infer_at)] = {per_sample / known, batches == 0};
    else if (infer_at >= 0 || known != per_sample || batches != 1)
      unsupported(n, what + fmt::format(": the dimensions do not hold the input's {} (B the "
                                        "batch size){}",
                                        dims_str(in),
                                        batches == 0 && infer_at < 0
                                            ? "; the file fixes the batch size here: export with "
                                              "dynamic_axes={'x': {0: 'batch'}} (the input's "
                                              "name), so that the model reads it from the input"
                                            : ""));
    const auto r = regroup(xs, v.groups, dims);
    if (!r)
      unsupported(n, what +
                         ": telar keeps the batch first, and these dimensions would cut it, or "
                         "cut the others in a way no split of the batch-first tensor gives");
    const ValueId value = r->dims == xs ? v.value
                                        : reshaped(node_name(n, "/split"), v.value,
                                                   Shape(r->dims.begin() + 1, r->dims.end()));
    define_view(n, {value, r->groups});
  }

  // MatMul of a view by a constant (a Linear over its last axis), or of two (the heads'
  // scores and context): the leading axes of both laid out alike, batch first.
  void matmul_view(const proto::NodeProto& n) {
    if (present(n, 1) && known(n.input(1))) {
      View v = last_alone(n, view_of(n, 0));
      define_view(n, {matmul_by_constant(n, v.value), std::move(v.groups)});
      return;
    }
    matmul_of(n, view_of(n, 0), view_of(n, 1));
  }
  // MatMul of two computed tensors or views, `va` by `vb`: the leading axes of both laid out
  // alike, batch first.
  void matmul_of(const proto::NodeProto& n, const View& va, const View& vb) {
    const std::string who = fmt::format("node '{}' ({})", n.name(), n.op_type());
    auto batched = [&](int k) {
      const View& v = k == 0 ? va : vb;
      if (v.groups.size() < 3)
        unsupported(n, fmt::format("MatMul of {}: telar multiplies two computed tensors of rank "
                                   "3 or more",
                                   view_str(v)));
      const std::vector<int> order = flattened(v.groups);
      if (order[0] != 0)
        unsupported(n, fmt::format("the batch does not lead the axes of {}", view_str(v)));
      for (std::size_t g = v.groups.size() - 2; g < v.groups.size(); ++g)
        if (std::count(v.groups[g].begin(), v.groups[g].end(), 0))
          unsupported(
              n, fmt::format("MatMul of {}: the batch is among the multiplied axes", view_str(v)));
      const View r = relaid(v, order, node_name(n, fmt::format("/transpose{}", k)));
      // Each axis of the file one of the value (the batch's group: the batch and one more), so
      // that two views of one layout split alike ([B, 8, 8] and [B, 64]) meet.
      std::vector<std::size_t> all(r.groups.size());
      for (std::size_t g = 0; g < all.size(); ++g) all[g] = g;
      return merged(r, all, node_name(n, fmt::format("/merge{}", k)), who);
    };
    const View a = batched(0), b = batched(1);
    const Shape &as = shape_of(a.value), &bs = shape_of(b.value);
    if (as.size() != bs.size() || !std::equal(as.begin(), as.end() - 2, bs.begin()) ||
        a.groups.size() != b.groups.size() ||
        !std::equal(a.groups.begin(), a.groups.end() - 2, b.groups.begin()))
      unsupported(n, fmt::format("MatMul of {} by {}: telar multiplies two tensors whose leading "
                                 "dimensions are made alike (no broadcasting)",
                                 view_str(va), view_str(vb)));
    View r{graph_.add_node(OpKind::MatMul, node_name(n), {}, {a.value, b.value}), a.groups};
    define_view(n, std::move(r));
  }

  // Einsum of two computed tensors that is a batched matrix product, as PyTorch writes
  // attention's scores and context (MaxViT's "BGHID,BGHJD->BGHIJ" and "BGHIJ,BGHJD->BGHID"):
  // "<lead>ik,<lead>kj-><lead>ij", or with the second operand's last two letters swapped (it is
  // read transposed: a regrouping, as a Transpose of a view is).
  void einsum(const proto::NodeProto& n, Attributes& at) {
    std::string eq;
    for (char ch : at.s("equation", ""))
      if (ch != ' ') eq += ch;
    const std::string what = fmt::format(
        "equation '{}': telar imports an Einsum of two tensors that is a batched matrix product "
        "('bik,bkj->bij', or 'bik,bjk->bij' with the second read transposed; the same leading "
        "letters in all three, no '...')",
        eq);
    const auto arrow = eq.find("->"), comma = eq.find(',');
    if (n.input_size() != 2 || arrow == std::string::npos || comma == std::string::npos ||
        comma > arrow || eq.find('.') != std::string::npos)
      unsupported(n, what);
    const std::string a = eq.substr(0, comma), b = eq.substr(comma + 1, arrow - comma - 1),
                      y = eq.substr(arrow + 2);
    const std::size_t r = a.size();
    if (r < 2 || b.size() != r || y.size() != r || a.compare(0, r - 2, b, 0, r - 2) != 0 ||
        a.compare(0, r - 2, y, 0, r - 2) != 0)
      unsupported(n, what);
    const char i = a[r - 2], k = a[r - 1];
    const bool transposed = b[r - 1] == k;
    const char j = transposed ? b[r - 2] : b[r - 1];
    const std::string letters = a.substr(0, r - 2) + i + j + k;
    const bool distinct = std::set<char>(letters.begin(), letters.end()).size() == letters.size();
    if (!distinct || (transposed ? b[r - 1] : b[r - 2]) != k || y[r - 2] != i || y[r - 1] != j)
      unsupported(n, what);
    const View va = view_of(n, 0);
    View vb = view_of(n, 1);
    if (va.groups.size() != r || vb.groups.size() != r)
      unsupported(n, fmt::format("{}: operands of {} and {} axes", what, va.groups.size(),
                                 vb.groups.size()));
    if (transposed) std::swap(vb.groups[r - 2], vb.groups[r - 1]);
    matmul_of(n, va, vb);
  }

  // Add, Sub, Mul, Div reading a view: of two views laid out alike, or of a view and a scalar or
  // per-feature constant (along the last axis); false for the others (read batch first, or
  // refused).
  bool binary_view(const proto::NodeProto& n, OpKind kind) {
    const bool first_known = present(n, 0) && known(n.input(0)),
               second_known = present(n, 1) && known(n.input(1));
    if (first_known || second_known) {
      const int k = first_known ? 0 : 1;
      const Constant& c = constant(n, k);
      View v = view_of(n, 1 - k);
      const auto rank = v.groups.size();
      bool per_feature = c.dims.size() <= rank;
      for (std::size_t d = 0; per_feature && d + 1 < c.dims.size(); ++d)
        per_feature = c.dims[d] == 1;
      if (!per_feature) {  // varying along other axes than the last (attention's biases, masks)
        const auto laid = laid_like(n, c, v);
        if (!laid) return false;
        const ValueId w = constant_operand(n.input(k), *laid, kind);
        const std::vector<ValueId> inputs =
            first_known ? std::vector<ValueId>{w, v.value} : std::vector<ValueId>{v.value, w};
        define_view(n, {graph_.add_node(kind, node_name(n), {}, inputs), v.groups});
        return true;
      }
      if (c.numel() != 1) v = last_alone(n, v);
      const ValueId w = operand(n, k, kind, Shape{c.numel()});
      const std::vector<ValueId> inputs =
          first_known ? std::vector<ValueId>{w, v.value} : std::vector<ValueId>{v.value, w};
      define_view(n, {graph_.add_node(kind, node_name(n), {}, inputs), v.groups});
      return true;
    }
    // Two views laid out alike; an axis of 1 broadcasts where it is a file's axis alone (x - mean).
    const View a = view_of(n, 0), b = view_of(n, 1);
    const Shape &as = shape_of(a.value), &bs = shape_of(b.value);
    if (a.groups != b.groups || as.size() != bs.size()) return false;
    for (const auto& g : a.groups)
      for (int axis : g) {
        const auto d = static_cast<std::size_t>(axis);
        if (as[d] != bs[d] && (g.size() != 1 || (as[d] != 1 && bs[d] != 1))) return false;
      }
    define_view(n, {graph_.add_node(kind, node_name(n), {}, {a.value, b.value}), a.groups});
    return true;
  }

  // --- the ops ---
  void import_node(const proto::NodeProto& n) {
    const std::string& op = n.op_type();
    if (!n.domain().empty() && n.domain() != "ai.onnx")
      unsupported(n, fmt::format("the domain '{}' is not supported (only the standard ONNX ops)",
                                 n.domain()));
    Attributes at(n);
    if (fold_constant(n, at) || (reads_view(n) && view_node(n, at))) {
      at.all_used();
      return;
    }
    if (const auto unary = kUnaryOps.find(op); unary != kUnaryOps.end()) {
      define(n, graph_.add_node(unary->second, node_name(n), {}, {dynamic(n, 0)}));
    } else if (const auto arithmetic = kBinaryOps.find(op); arithmetic != kBinaryOps.end()) {
      binary(n, arithmetic->second);
    } else if (op == "Conv") {
      conv(n, at);
    } else if (op == "ConvTranspose") {
      conv_transpose(n, at);
    } else if (op == "Gemm") {
      define(n, gemm(n, at, dynamic(n, 0)));
    } else if (op == "MatMul") {
      const ValueId x = dynamic(n, 0);
      if (!present(n, 1) || !known(n.input(1))) {
        matmul(n, x, dynamic(n, 1));
        return;
      }
      define(n, matmul_by_constant(n, x));
    } else if (op == "BatchNormalization") {
      batchnorm(n, at);
    } else if (op == "Clip") {
      clip(n, at);
    } else if (op == "Softmax") {
      const ValueId x = dynamic(n, 0);
      const auto rank = static_cast<std::int64_t>(shape_of(x).size());
      const std::int64_t axis = at.i("axis", opset_ >= 13 ? -1 : 1);
      // Before opset 13 Softmax flattens the axes from `axis` on: the last axis alone either way.
      if (rank < 2 || (axis != rank - 1 && axis != -1))
        unsupported(n, fmt::format("axis {} of a rank-{} tensor: telar imports Softmax over the "
                                   "last axis",
                                   axis, rank));
      define(n, graph_.add_node(OpKind::Softmax, node_name(n), {}, {x}));
    } else if (op == "MaxPool" || op == "AveragePool") {
      pool(n, at);
    } else if (op == "GlobalAveragePool") {
      global_average(n, dynamic(n, 0), true);
    } else if (op == "ReduceMean") {
      reduce_mean(n, at);
    } else if (op == "Flatten") {
      const ValueId x = dynamic(n, 0);
      if (at.i("axis", 1) != 1) unsupported(n, "telar imports Flatten with axis 1");
      define(n, shape_of(x).size() == 2 ? x : graph_.add_node(OpKind::Flatten, node_name(n), {}, {x}));
    } else if (op == "Reshape") {
      reshape(n, at);
    } else if (op == "Expand") {
      expand(n);
    } else if (op == "Gather") {
      gather(n, at);
    } else if (op == "Transpose") {
      transpose_node(n, at);
    } else if (op == "Slice") {
      slice(n, at);
    } else if (op == "Split") {
      split(n, at);
    } else if (op == "Pad") {
      pad(n, at);
    } else if (op == "Resize" || op == "Upsample") {
      resize(n, at);
    } else if (op == "LeakyRelu" || op == "HardSigmoid") {
      const bool leaky = op == "LeakyRelu";
      graph::EltwiseAttrs a;
      a.alpha = at.f("alpha", leaky ? 0.01f : 0.2f);
      a.beta = leaky ? 0.0f : at.f("beta", 0.5f);
      define(n, graph_.add_node(leaky ? OpKind::LeakyReLU : OpKind::HardSigmoid, node_name(n), a,
                                {dynamic(n, 0)}));
    } else if (op == "LayerNormalization") {
      const ValueId x = dynamic(n, 0);
      define(n, layer_norm(n, at, x, static_cast<std::int64_t>(shape_of(x).size())));
    } else if (op == "Pow") {
      define(n, power(n, dynamic(n, 0)));
    } else if (op == "Dropout") {
      dropout(n, at);
    } else if (op == "Identity") {
      define(n, dynamic(n, 0));
    } else if (op == "Concat") {
      concat(n, at);
    } else if (op == "Einsum") {
      einsum(n, at);
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
    const auto [padded, pads] =
        split_pads(n, x, pads_of(n, at, xs, {a.kernel_h, a.kernel_w}, st, dl), 0.0f);
    a.pad_h = pads[0], a.pad_w = pads[1];
    a.bias = present(n, 2);
    if (a.groups <= 0 || xs[1] % a.groups || w.dims[1] * a.groups != xs[1])
      unsupported(n, fmt::format("group {} does not fit {} input channels and a weight of {}",
                                 a.groups, xs[1], shape_str(w.dims)));
    const auto bound = fan_in_bound(w.dims[1] * a.kernel_h * a.kernel_w);
    std::vector<ValueId> inputs{padded, weight(n.input(1), w, w.dims, bound)};
    if (a.bias) inputs.push_back(weight(n.input(2), constant(n, 2), {a.out_channels}, bound));
    define(n, graph_.add_node(OpKind::Conv2d, node_name(n), a, std::move(inputs)));
  }

  // ConvTranspose with explicit symmetric pads (what PyTorch writes for nn.ConvTranspose2d).
  void conv_transpose(const proto::NodeProto& n, Attributes& at) {
    const ValueId x = dynamic(n, 0);
    const Constant& w = constant(n, 1);
    const Shape& xs = shape_of(x);
    if (xs.size() != 4 || w.dims.size() != 4)
      unsupported(n,
                  "telar imports 2-D transposed convolutions (NCHW input, weight [C, O/group, "
                  "kH, kW])");
    graph::ConvTranspose2dAttrs a;
    a.groups = at.i("group", 1);
    a.in_channels = xs[1];
    a.out_channels = w.dims[1] * a.groups;
    a.kernel_h = w.dims[2];
    a.kernel_w = w.dims[3];
    if (at.ints("kernel_shape", {a.kernel_h, a.kernel_w}) !=
        std::vector<std::int64_t>{a.kernel_h, a.kernel_w})
      unsupported(n, "kernel_shape disagrees with the weight's shape");
    const auto st = pair(n, at, "strides", 1);
    const auto dl = pair(n, at, "dilations", 1);
    a.stride_h = st[0], a.stride_w = st[1];
    a.dilation_h = dl[0], a.dilation_w = dl[1];
    if (at.s("auto_pad", "NOTSET") != "NOTSET")
      unsupported(n, "telar imports ConvTranspose with explicit pads (auto_pad NOTSET)");
    if (!at.ints("output_shape", {}).empty())
      unsupported(n, "telar imports ConvTranspose with pads and output_padding, not output_shape");
    const auto p = at.ints("pads", {0, 0, 0, 0});
    if (p.size() != 4 || p[0] != p[2] || p[1] != p[3] || p[0] < 0 || p[1] < 0)
      unsupported(n, fmt::format("pads [{}]: telar imports ConvTranspose with the same padding "
                                 "on both sides of each axis",
                                 fmt::join(p, ", ")));
    a.pad_h = p[0], a.pad_w = p[1];
    const auto op = at.ints("output_padding", {0, 0});
    if (op.size() != 2) unsupported(n, "output_padding must hold two values");
    a.output_padding_h = op[0], a.output_padding_w = op[1];
    a.bias = present(n, 2);
    if (a.groups <= 0 || xs[1] != w.dims[0] || xs[1] % a.groups)
      unsupported(n, fmt::format("group {} does not fit {} input channels and a weight of {}",
                                 a.groups, xs[1], shape_str(w.dims)));
    // PyTorch's fan-in of a transposed convolution's weight: dims[1] x kH x kW.
    const auto bound = fan_in_bound(w.dims[1] * a.kernel_h * a.kernel_w);
    std::vector<ValueId> inputs{x, weight(n.input(1), w, w.dims, bound)};
    if (a.bias) inputs.push_back(weight(n.input(2), constant(n, 2), {a.out_channels}, bound));
    define(n, graph_.add_node(OpKind::ConvTranspose2d, node_name(n), a, std::move(inputs)));
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

  // Padding {top, left, bottom, right} from `pads` or `auto_pad`.
  std::array<std::int64_t, 4> pads_of(const proto::NodeProto& n, Attributes& at, const Shape& xs,
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
    if (p.size() != 4 || *std::min_element(p.begin(), p.end()) < 0)
      unsupported(n, fmt::format("attribute 'pads' [{}] must give four sizes, none negative",
                                 fmt::join(p, ", ")));
    return {p[0], p[1], p[2], p[3]};
  }

  // Padding {top, left, bottom, right} as telar's convolutions and pools take it: the part
  // both ends of an axis share stays with the op ({pad_h, pad_w}); the rest becomes a Pad node
  // filled with `value` in front of it (x itself where there is no rest).
  std::pair<ValueId, std::array<std::int64_t, 2>> split_pads(const proto::NodeProto& n,
                                                             ValueId x,
                                                             std::array<std::int64_t, 4> p,
                                                             float value) {
    const std::int64_t h = std::min(p[0], p[2]), w = std::min(p[1], p[3]);
    if (p[0] == p[2] && p[1] == p[3]) return {x, {h, w}};
    graph::PadAttrs a;
    a.top = p[0] - h, a.left = p[1] - w, a.bottom = p[2] - h, a.right = p[3] - w;
    a.value = value;
    return {graph_.add_node(OpKind::Pad, node_name(n, "/pad"), a, {x}), {h, w}};
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

  // Gemm of x (the node's first input, or what a view of it became) by a constant.
  ValueId gemm(const proto::NodeProto& n, Attributes& at, ValueId x) {
    const Constant& b = constant(n, 1);
    if (at.i("transA", 0) != 0) unsupported(n, "attribute 'transA' = 1 is not supported");
    const bool trans_b = at.i("transB", 0) != 0;
    const float alpha = at.f("alpha", 1.0f), beta = at.f("beta", 1.0f);
    if (b.dims.size() != 2 || (shape_of(x).size() != 2 && !views_.count(n.input(0))))
      unsupported(n, "telar imports Gemm of a [batch, K] tensor by a constant matrix");
    const Constant w = trans_b ? b : transpose(b, n.input(1));  // [N, K], a Linear layer's weight
    const Constant* bias = present(n, 2) ? &constant(n, 2) : nullptr;
    return linear(n, x, w, w.dims[0], w.dims[1], bias, alpha, beta);
  }

  // MatMul of x (as gemm()) by a constant [K, N]: a Linear over x's last axis.
  ValueId matmul_by_constant(const proto::NodeProto& n, ValueId x) {
    const Constant& w = constant(n, 1);
    if (w.dims.size() != 2 || shape_of(x).size() < 2)
      unsupported(n,
                  "telar imports MatMul of a [batch, ..., K] tensor by a constant [K, N] "
                  "matrix (a Linear over the last axis), or of two computed tensors");
    return linear(n, x, transpose(w, n.input(1)), w.dims[1], w.dims[0], nullptr, 1.0f, 1.0f);
  }

  ValueId linear(const proto::NodeProto& n, ValueId x, Constant w, std::int64_t out,
                 std::int64_t in, const Constant* bias, float alpha, float beta) {
    if (shape_of(x).back() != in)
      unsupported(
          n, fmt::format("the input has {} features and the weight {}", shape_of(x).back(), in));
    for (float& v : w.f) v *= alpha;
    graph::LinearAttrs a{in, out, bias != nullptr, {}};
    const auto bound = fan_in_bound(in);
    std::vector<ValueId> inputs{x, weight(n.input(1), w, {out, in}, bound)};
    if (bias) {
      Constant c = *bias;
      if (c.numel() != out)
        unsupported(n, fmt::format("a bias C of {} values for {} outputs (telar adds one bias "
                                   "per output)",
                                   c.numel(), out));
      for (float& v : c.f) v *= beta;
      inputs.push_back(weight(n.input(2), c, {out}, bound));
    }
    return graph_.add_node(OpKind::Linear, node_name(n), a, std::move(inputs));
  }

  void batchnorm(const proto::NodeProto& n, Attributes& at) {
    const ValueId x = dynamic(n, 0);
    if (shape_of(x).size() != 4) unsupported(n, "telar imports BatchNormalization of NCHW tensors");
    // Exported in training mode, it also outputs the updated running statistics: telar's
    // BatchNorm2d normalises with the batch's statistics and updates its own when training.
    at.i("training_mode", 0);
    internal_outputs(n, 1, "running statistics");
    at.i("spatial", 1);
    graph::BatchNormAttrs a;
    a.channels = shape_of(x)[1];
    a.eps = at.f("epsilon", 1e-5f);
    a.momentum = 1.0f - at.f("momentum", 0.9f);  // ONNX weighs the running value, PyTorch the batch
    const Shape c{a.channels};
    for (int k = 1; k <= 4; ++k) constant(n, k);  // each present (before n.input(k) is read)
    std::vector<ValueId> inputs{
        x, weight(n.input(1), constant(n, 1), c, graph::Initializer::ones()),
        weight(n.input(2), constant(n, 2), c, graph::Initializer::zeros()),
        weight(n.input(3), constant(n, 3), c, graph::Initializer::zeros(), true),
        weight(n.input(4), constant(n, 4), c, graph::Initializer::ones(), true)};
    define(n, graph_.add_node(OpKind::BatchNorm2d, node_name(n), a, std::move(inputs)));
  }

  // Dropout exported in training mode is telar's Dropout (active when training); in inference
  // mode (or with ratio 0) it is removed. Of a computed tensor or of a view (element-wise: the
  // layout does not matter).
  void dropout(const proto::NodeProto& n, Attributes& at) {
    const View x = view_of(n, 0);
    float ratio = at.f("ratio", 0.5f);
    at.i("seed", 0);
    at.i("is_test", 0);
    if (present(n, 1)) ratio = constant(n, 1).scalar();
    const bool training = present(n, 2) && constant(n, 2).scalar() != 0.0f;
    internal_outputs(n, 1, "mask");
    if (ratio < 0.0f || ratio >= 1.0f) unsupported(n, fmt::format("ratio {} is outside [0, 1)", ratio));
    if (!training || ratio == 0.0f) {
      define_view(n, x);
      return;
    }
    define_view(
        n, {graph_.add_node(OpKind::Dropout, node_name(n), graph::DropoutAttrs{ratio}, {x.value}),
            x.groups});
  }

  // Outputs `first` on of node n are what telar computes for itself (`what`): no later node
  // may read them.
  void internal_outputs(const proto::NodeProto& n, int first, const std::string& what) {
    for (int k = first; k < n.output_size(); ++k)
      if (!n.output(k).empty())
        internal_[n.output(k)] = fmt::format("the {} of node '{}' ({})", what, n.name(), n.op_type());
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
    if (at.i("storage_order", 0) != 0) unsupported(n, "attribute 'storage_order' = 1");
    const bool max = n.op_type() == "MaxPool";
    if (max && n.output_size() > 1 && !n.output(1).empty())
      unsupported(n, "the Indices output of MaxPool is not supported");
    graph::Pool2dAttrs a;
    a.kernel_h = k[0], a.kernel_w = k[1];
    a.stride_h = st[0], a.stride_w = st[1];
    a.count_include_pad = max ? true : at.i("count_include_pad", 0) != 0;
    auto pads = pads_of(n, at, xs, {k[0], k[1]}, st, dl);
    if (at.i("ceil_mode", 0) != 0) {
      // PyTorch's rule: the output rounds up, but the last window must start inside the input
      // or its leading padding. The windows past the trailing padding become more padding.
      for (int d = 0; d < 2; ++d) {
        const std::int64_t in = xs[2 + d] + pads[d] + pads[d + 2];
        std::int64_t out = (in - k[d] + st[d] - 1) / st[d] + 1;
        if ((out - 1) * st[d] >= xs[2 + d] + pads[d]) --out;
        const std::int64_t extra = std::max<std::int64_t>(0, (out - 1) * st[d] + k[d] - in);
        if (extra > 0 && !max)
          unsupported(n, "attribute 'ceil_mode' = 1 where it adds a window: telar's average "
                         "pooling has no partial windows (export with ceil_mode=False)");
        pads[d + 2] += extra;
      }
    }
    const bool symmetric = pads[0] == pads[2] && pads[1] == pads[3];
    if (!max && !symmetric && !a.count_include_pad)
      unsupported(n, fmt::format("pads [{}] differ at the two ends of an axis with "
                                 "count_include_pad = 0, which telar cannot split",
                                 fmt::join(pads, ", ")));
    const float fill = max ? -std::numeric_limits<float>::infinity() : 0.0f;
    const auto [padded, sym] = split_pads(n, x, pads, fill);
    a.pad_h = sym[0], a.pad_w = sym[1];
    define(n, graph_.add_node(max ? OpKind::MaxPool2d : OpKind::AvgPool2d, node_name(n), a,
                              {padded}));
  }

  // GlobalAvgPool gives [B, C]; with `keep`, reshaped to the file's [B, C, 1, 1] (a relabelling
  // that moves no data).
  void global_average(const proto::NodeProto& n, ValueId x, bool keep) {
    const Shape& xs = shape_of(x);
    if (xs.size() != 4) unsupported(n, "telar imports global average pooling of NCHW tensors");
    ValueId y = graph_.add_node(OpKind::GlobalAvgPool, node_name(n), {}, {x});
    if (keep) {
      graph::ReshapeAttrs r;
      r.dims = {xs[1], 1, 1};
      y = graph_.add_node(OpKind::Reshape, node_name(n, "/keepdims"), r, {y});
    }
    define(n, y);
  }

  // ReduceMean over the two spatial axes of NCHW (x.mean([2, 3]), as MNASNet and ShuffleNet end).
  void reduce_mean(const proto::NodeProto& n, Attributes& at) {
    const ValueId x = dynamic(n, 0);
    auto axes = present(n, 1) ? constant(n, 1).ints() : at.ints("axes", {});
    const bool keep = at.i("keepdims", 1) != 0;
    at.i("noop_with_empty_axes", 0);
    const auto rank = static_cast<std::int64_t>(shape_of(x).size());
    for (auto& axis : axes)
      if (axis < 0) axis += rank;
    std::sort(axes.begin(), axes.end());
    if (rank == 4 && axes == std::vector<std::int64_t>{2, 3}) {
      global_average(n, x, keep);
      return;
    }
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    if (axes.empty() || axes[0] < 1 || axes.back() >= rank ||
        (!keep && rank - static_cast<std::int64_t>(axes.size()) < 2))
      unsupported(n, fmt::format("ReduceMean over axes [{}] of {}: telar imports the mean over "
                                 "axes after the batch, leaving at least one",
                                 fmt::join(axes, ", "), shape_str(shape_of(x))));
    // The mean over several axes is the mean over each in turn (every axis kept, as 1).
    ValueId y = x;
    for (std::size_t k = 0; k < axes.size(); ++k)
      y = mean_over(axes.size() == 1 ? node_name(n) : fmt::format("{}/{}", node_name(n), k), y,
                    axes[k]);
    define(n, keep ? y : squeeze(node_name(n) + "/squeeze", y, axes));
  }

  // `y` without its axes `axes` (each of extent 1).
  ValueId squeeze(const std::string& name, ValueId y, const std::vector<std::int64_t>& axes) {
    graph::ReshapeAttrs r;
    const Shape& ys = shape_of(y);
    for (std::size_t d = 1; d < ys.size(); ++d)
      if (std::find(axes.begin(), axes.end(), static_cast<std::int64_t>(d)) == axes.end())
        r.dims.push_back(ys[d]);
    return graph_.add_node(OpKind::Reshape, name, r, {y});
  }

  // telar's ReduceMean over `axis` (kept as 1).
  ValueId mean_over(const std::string& name, ValueId x, std::int64_t axis) {
    graph::ReduceAttrs a;
    a.axis = axis;
    return graph_.add_node(OpKind::ReduceMean, name, a, {x});
  }

  // LayerNormalization over the last axis: telar's LayerNorm (a missing bias: a constant of
  // zeros, which training leaves alone).
  // Of x (the node's input, or the value of a view of rank `rank` with its last axis alone).
  ValueId layer_norm(const proto::NodeProto& n, Attributes& at, ValueId x, std::int64_t rank) {
    std::int64_t axis = at.i("axis", -1);
    if (axis < 0) axis += rank;
    if (axis != rank - 1 || rank < 2)
      unsupported(n, fmt::format("axis {}: telar imports LayerNormalization over the last axis",
                                 at.i("axis", -1)));
    at.i("stash_type", 1);
    internal_outputs(n, 1, "statistics");
    graph::LayerNormAttrs a;
    a.features = shape_of(x).back();
    a.eps = at.f("epsilon", 1e-5f);
    const Constant& scale_values = constant(n, 1);  // present (before n.input(1) is read)
    const ValueId scale =
        weight(n.input(1), scale_values, {a.features}, graph::Initializer::ones());
    const ValueId bias =
        present(n, 2)
            ? weight(n.input(2), constant(n, 2), {a.features}, graph::Initializer::zeros())
            : fixed(node_name(n) + "/bias", zeros_of(a.features), {a.features});
    return graph_.add_node(OpKind::LayerNorm, node_name(n), a, {x, scale, bias});
  }

  // x to a constant power (one value): a square as x * x, a square root as Sqrt.
  ValueId power(const proto::NodeProto& n, ValueId x) {
    const Constant& e = constant(n, 1);
    if (e.numel() != 1)
      unsupported(n,
                  "telar imports Pow with one constant exponent (a scalar), not a tensor of "
                  "exponents");
    const float p = e.scalar();
    if (p == 2.0f) return graph_.add_node(OpKind::Mul, node_name(n), {}, {x, x});
    if (p == 0.5f) return graph_.add_node(OpKind::Sqrt, node_name(n), {}, {x});
    if (p == 1.0f) return x;
    return graph_.add_node(OpKind::Pow, node_name(n), graph::EltwiseAttrs{p, 0.0f}, {x});
  }

  // MatMul of two computed tensors [B, ..., M, K] x [B, ..., K, N] (attention's scores and
  // context).
  void matmul(const proto::NodeProto& n, ValueId a, ValueId b) {
    const Shape &as = shape_of(a), &bs = shape_of(b);
    if (as.size() < 3 || as.size() != bs.size() ||
        !std::equal(as.begin(), as.end() - 2, bs.begin()))
      unsupported(n, fmt::format("MatMul of {} by {}: telar multiplies two computed tensors of "
                                 "one rank with the same leading dimensions (no broadcasting)",
                                 shape_str(as), shape_str(bs)));
    define(n, graph_.add_node(OpKind::MatMul, node_name(n), {}, {a, b}));
  }

  // Expand of a constant [1, ...] over the batch (a class token, cls.expand(B, -1, -1)): telar's
  // Expand of a parameter, the batch read from the model's input.
  void expand(const proto::NodeProto& n) {
    const Constant& w = constant(n, 0);
    const Constant& t = constant(n, 1, true);
    const auto target = t.ints();
    const std::string what =
        fmt::format("Expand of {} to [{}]", shape_str(w.dims), fmt::join(target, ", "));
    bool ok = w.dims.size() >= 2 && w.dims[0] == 1 && target.size() == w.dims.size() &&
              t.batch_at(0) == Constant::Batch::Is;
    for (std::size_t k = 1; ok && k < target.size(); ++k)
      ok = t.batch_at(k) == Constant::Batch::No && (target[k] == 1 || target[k] == w.dims[k]);
    if (!ok)
      unsupported(n, what +
                         ": telar expands a constant of one sample, [1, ...], over the batch "
                         "and nothing else");
    const ValueId param = initializers_.count(n.input(0))
                              ? weight(n.input(0), w, w.dims, graph::Initializer::zeros())
                              : fixed(n.input(0), w, w.dims);
    define(n, graph_.add_node(OpKind::Expand, node_name(n), {}, {graph_.inputs().at(0), param}));
  }

  // Gather of one index along an axis after the batch (x[:, 0], a transformer's class token):
  // a slice, and the axis dropped where the index is a scalar.
  // Gather's one index along an axis of `size` (negative counting from the end), checked.
  std::int64_t gathered_index(const proto::NodeProto& n, const Constant& index, std::int64_t axis,
                              std::int64_t size) const {
    const std::int64_t given = index.ints()[0], k = given < 0 ? given + size : given;
    if (k < 0 || k >= size)
      unsupported(n, fmt::format("index {} is outside axis {} of size {}", given, axis, size));
    return k;
  }

  void gather(const proto::NodeProto& n, Attributes& at) {
    const ValueId x = dynamic(n, 0);
    const Constant& index = constant(n, 1);
    const Shape xs = shape_of(x);  // a copy: adding nodes moves the graph's values
    const auto rank = static_cast<std::int64_t>(xs.size());
    std::int64_t axis = at.i("axis", 0);
    if (axis < 0) axis += rank;
    if (index.numel() != 1 || index.dims.size() > 1 || axis <= 0 || axis >= rank)
      unsupported(n, fmt::format("telar imports Gather of one index along an axis after the "
                                 "batch (axis {} of {}, {} indices)",
                                 at.i("axis", 0), shape_str(xs), index.numel()));
    const std::int64_t k = gathered_index(n, index, axis, xs[static_cast<std::size_t>(axis)]);
    const ValueId y =
        slice_axis(n, node_name(n, index.dims.empty() ? "/slice" : ""), x, axis, k, k + 1);
    if (!index.dims.empty()) {
      define(n, y);
      return;
    }
    Shape dims(xs.begin() + 1, xs.end());
    dims.erase(dims.begin() + (axis - 1));
    if (dims.empty()) unsupported(n, "the gather would leave the batch alone");
    define(n, reshaped(node_name(n), y, std::move(dims)));
  }

  // Gather of one index along an axis of a view that is one axis of the value, not the batch
  // (q, k, v = qkv[0], qkv[1], qkv[2] of attention's packed projection).
  void gather_view(const proto::NodeProto& n, Attributes& at) {
    View v = view_of(n, 0);
    const Constant& index = constant(n, 1);
    const auto rank = static_cast<std::int64_t>(v.groups.size());
    std::int64_t axis = at.i("axis", 0);
    if (axis < 0) axis += rank;
    if (index.numel() != 1 || index.dims.size() > 1 || axis < 0 || axis >= rank ||
        v.groups[static_cast<std::size_t>(axis)].size() != 1 ||
        v.groups[static_cast<std::size_t>(axis)][0] == 0)
      unsupported(n, fmt::format("telar imports Gather of one index along an axis of {} that "
                                 "does not hold the batch (axis {}, an index of shape {})",
                                 view_str(v), at.i("axis", 0), shape_str(index.dims)));
    const auto g = static_cast<std::size_t>(axis);
    const int value_axis = v.groups[g][0];
    const std::int64_t k =
        gathered_index(n, index, axis, shape_of(v.value)[static_cast<std::size_t>(value_axis)]);
    v.value = slice_axis(n, node_name(n), v.value, value_axis, k, k + 1);
    if (index.dims.empty()) {  // the axis goes; its 1 joins a neighbour, where it orders nothing
      auto& next = g > 0 ? v.groups[g - 1] : v.groups[g + 1];
      if (g > 0)
        next.push_back(value_axis);
      else
        next.insert(next.begin(), value_axis);
      v.groups.erase(v.groups.begin() + axis);
    }
    define_view(n, std::move(v));
  }

  // A Reshape whose first target dimension is the batch (read from the input's shape, 0 to copy
  // it, or -1), the others fixed at import.
  // Others (the batch moved or merged with other dimensions) make a view: reshape_view().
  void reshape(const proto::NodeProto& n, Attributes& at) {
    const Constant& t = constant(n, 1, true);
    bool batch_first = !views_.count(n.input(0));
    for (std::size_t k = 0; k < t.batch.size(); ++k)
      batch_first = batch_first && (t.batch[k] == Constant::Batch::No ||
                                    (k == 0 && t.batch[k] == Constant::Batch::Is));
    if (batch_first && !t.depends_on_batch() && !t.i.empty() && t.i[0] == -1) {
      // [-1, fixed sizes of fewer elements than a sample]: the batch merged with the rest
      // (Swin's attn.view(-1, heads, N, N) of [B, windows, heads, N, N]).
      const Shape& xs = shape_of(dynamic(n, 0));
      std::int64_t per_sample = 1, rest = 1;
      for (std::size_t k = 1; k < xs.size(); ++k) per_sample *= xs[k];
      for (std::size_t k = 1; k < t.i.size(); ++k) rest = t.i[k] > 0 ? times(n, rest, t.i[k]) : 0;
      batch_first = rest == 0 || rest == per_sample;
    }
    if (!batch_first) {
      reshape_view(n, at);
      return;
    }
    const ValueId x = dynamic(n, 0);
    const Shape& xs = shape_of(x);
    const bool allowzero = at.i("allowzero", 0) != 0;
    const auto target = t.ints();
    const std::string what = fmt::format("Reshape of {} to [{}]", shape_str(xs),
                                         fmt::join(target, ", "));
    if (target.size() < 2)
      unsupported(n, what + ": telar keeps the batch as the first of at least two dimensions");
    std::int64_t per_sample = 1;
    for (std::size_t k = 1; k < xs.size(); ++k) per_sample *= xs[k];
    std::vector<std::int64_t> dims;
    std::int64_t known = 1;
    int infer_at = -1;
    for (std::size_t k = 1; k < target.size(); ++k) {
      std::int64_t d = target[k];
      if (d == 0 && !allowzero) {
        if (k >= xs.size()) unsupported(n, what + ": a 0 copies a dimension the input lacks");
        d = xs[k];
      }
      if (d == -1) {
        if (infer_at >= 0) unsupported(n, what + ": more than one -1");
        infer_at = static_cast<int>(dims.size());
      } else if (d <= 0) {
        unsupported(n, what + ": dimensions must be positive, 0 (copy) or -1 (infer)");
      } else {
        known = times(n, known, d);
      }
      dims.push_back(d);
    }
    const bool batch_given =
        t.batch_at(0) == Constant::Batch::Is || target[0] > 0 || (target[0] == 0 && !allowzero);
    if (!batch_given && infer_at >= 0)
      unsupported(n, what + ": the batch and another dimension are both left to infer");
    if (infer_at >= 0) {
      if (known == 0 || per_sample % known)
        unsupported(n, what + ": the sizes do not divide the input's elements per sample");
      dims[static_cast<std::size_t>(infer_at)] = per_sample / known;
    } else if (known != per_sample) {
      unsupported(n, what + fmt::format(": it does not keep the batch first ({} elements per "
                                        "sample, not {})",
                                        known, per_sample));
    }
    define(n, dims == std::vector<std::int64_t>(xs.begin() + 1, xs.end())
                  ? x
                  : reshaped(node_name(n), x, std::move(dims)));
  }

  void transpose_node(const proto::NodeProto& n, Attributes& at) {
    const ValueId x = dynamic(n, 0);
    const auto rank = static_cast<std::int64_t>(shape_of(x).size());
    std::vector<std::int64_t> perm(static_cast<std::size_t>(rank));
    for (std::int64_t d = 0; d < rank; ++d) perm[static_cast<std::size_t>(d)] = rank - 1 - d;
    perm = at.ints("perm", perm);
    if (perm.empty() || perm[0] != 0) {  // the batch moves: a view of x
      transpose_view(n, at);
      return;
    }
    bool identity = true;
    for (std::size_t d = 0; d < perm.size(); ++d) identity = identity && perm[d] == static_cast<std::int64_t>(d);
    if (identity && static_cast<std::int64_t>(perm.size()) == rank) {
      define(n, x);
      return;
    }
    graph::TransposeAttrs a;
    a.perm = std::move(perm);
    define(n, graph_.add_node(OpKind::Transpose, node_name(n), a, {x}));
  }

  // [start, end) of `axis` every `step` elements as telar's Slice (x itself where it is the whole
  // axis); `start` and `end` as ONNX gives them (negative from the end, clamped to the axis).
  ValueId slice_axis(const proto::NodeProto& n, const std::string& name, ValueId x,
                     std::int64_t axis, std::int64_t start, std::int64_t end,
                     std::int64_t step = 1) {
    const auto rank = static_cast<std::int64_t>(shape_of(x).size());
    if (axis < 0) axis += rank;
    if (axis <= 0 || axis >= rank)
      unsupported(n, fmt::format("a slice along axis {} of a rank-{} tensor: telar slices the "
                                 "axes after the batch",
                                 axis, rank));
    const std::int64_t size = shape_of(x)[static_cast<std::size_t>(axis)];
    start = clamped_index(start, size), end = clamped_index(end, size);
    if (start >= end)
      unsupported(n, fmt::format("an empty slice [{}, {}) of axis {}", start, end, axis));
    if (start == 0 && end == size && step == 1) return x;
    graph::SliceAttrs a;
    a.axis = axis, a.start = start, a.end = end;
    a.step.every = std::min(step, end - start);  // a longer step takes the first element alone
    return graph_.add_node(OpKind::Slice, name, a, {x});
  }

  void slice(const proto::NodeProto& n, Attributes& at) {
    View v = view_of(n, 0);
    std::vector<std::int64_t> starts, ends, axes, steps;
    if (opset_ < 10) {
      starts = at.ints("starts", {}), ends = at.ints("ends", {}), axes = at.ints("axes", {});
    } else {
      starts = constant(n, 1).ints(), ends = constant(n, 2).ints();
      if (present(n, 3)) axes = constant(n, 3).ints();
      if (present(n, 4)) steps = constant(n, 4).ints();
    }
    if (axes.empty())
      for (std::size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<std::int64_t>(k));
    if (starts.size() != ends.size() || axes.size() != starts.size() ||
        (!steps.empty() && steps.size() != starts.size()))
      unsupported(n, "starts, ends, axes and steps must have one entry per sliced axis");
    for (auto step : steps)
      if (step < 1)
        unsupported(n,
                    fmt::format("a step of {}: telar slices forwards (steps of 1 or more)", step));
    // Of a view, along its axes that are one axis of the value, not the batch.
    const auto rank = static_cast<std::int64_t>(v.groups.size());
    for (std::size_t k = 0; k < starts.size(); ++k) {
      const std::int64_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
      if (axis < 0 || axis >= rank || v.groups[static_cast<std::size_t>(axis)].size() != 1)
        unsupported(n, fmt::format("a slice along axis {} of {}: telar slices the axes after the "
                                   "batch",
                                   axes[k], view_str(v)));
      v.value = slice_axis(n, node_name(n, fmt::format("/{}", k)), v.value,
                           v.groups[static_cast<std::size_t>(axis)][0], starts[k], ends[k],
                           steps.empty() ? 1 : steps[k]);
    }
    define_view(n, std::move(v));
  }

  // Split into consecutive parts along one axis: one Slice per output.
  void split(const proto::NodeProto& n, Attributes& at) {
    const ValueId x = dynamic(n, 0);
    const auto rank = static_cast<std::int64_t>(shape_of(x).size());
    std::int64_t axis = at.i("axis", 0);
    if (axis < 0) axis += rank;
    if (axis <= 0 || axis >= rank)
      unsupported(n, fmt::format("a split along axis {}: telar splits the axes after the batch",
                                 axis));
    const std::int64_t size = shape_of(x)[static_cast<std::size_t>(axis)];
    std::vector<std::int64_t> parts =
        present(n, 1) ? constant(n, 1).ints() : at.ints("split", {});
    const std::int64_t count = at.i("num_outputs", n.output_size());
    if (parts.empty()) {
      if (count <= 0) unsupported(n, "a split into no parts");
      const std::int64_t each = (size + count - 1) / count;
      for (std::int64_t k = 0, left = size; k < count; ++k, left -= each)
        parts.push_back(std::min(each, left));
    }
    if (static_cast<int>(parts.size()) != n.output_size())
      unsupported(n, fmt::format("{} parts for {} outputs", parts.size(), n.output_size()));
    std::int64_t start = 0;
    for (std::size_t k = 0; k < parts.size(); ++k) {
      const ValueId part = slice_axis(n, node_name(n, fmt::format("/{}", k)), x, axis, start,
                                      start + parts[k]);
      values_[n.output(static_cast<int>(k))] = part;
      start += parts[k];
    }
    if (start != size)
      unsupported(n, fmt::format("parts of {} elements for an axis of {}", start, size));
  }

  // Constant padding of the spatial axes of NCHW.
  void pad(const proto::NodeProto& n, Attributes& at) {
    const ValueId x = dynamic(n, 0);
    const auto rank = static_cast<std::int64_t>(shape_of(x).size());
    const std::string mode = at.s("mode", "constant");
    if (mode != "constant")
      unsupported(n, fmt::format("mode '{}': telar pads with a constant", mode));
    std::vector<std::int64_t> pads = opset_ < 11 ? at.ints("pads", {}) : constant(n, 1).ints();
    float value = opset_ < 11 ? at.f("value", 0.0f) : 0.0f;
    if (opset_ >= 11 && present(n, 2)) value = constant(n, 2).scalar();
    std::vector<std::int64_t> axes;
    if (present(n, 3)) {
      axes = constant(n, 3).ints();
    } else {
      for (std::int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    if (pads.size() != 2 * axes.size())
      unsupported(n, fmt::format("{} pads for {} axes", pads.size(), axes.size()));
    // Per axis, the padding before and after it.
    std::vector<std::array<std::int64_t, 2>> around(static_cast<std::size_t>(rank), {0, 0});
    const auto k = axes.size();
    for (std::size_t j = 0; j < k; ++j) {
      const std::int64_t axis = axes[j] < 0 ? axes[j] + rank : axes[j];
      if (axis < 0 || axis >= rank)
        unsupported(n, fmt::format("axis {} of a rank-{} tensor", axes[j], rank));
      if (pads[j] < 0 || pads[j + k] < 0)
        unsupported(n, fmt::format("negative pads [{}] (a crop)", fmt::join(pads, ", ")));
      around[static_cast<std::size_t>(axis)] = {pads[j], pads[j + k]};
    }
    auto padded = [&](std::int64_t axis) {
      return around[static_cast<std::size_t>(axis)] != std::array<std::int64_t, 2>{0, 0};
    };
    // NCHW pads its axes 2 and 3; NHWC (Swin's windows of [B, H, W, C]) its 1 and 2: where
    // axis 1 is padded, between two Transposes (axis 2 alone is the same either way).
    const bool nhwc = rank == 4 && padded(1) && !padded(3);
    for (std::int64_t axis = 0; axis < rank; ++axis)
      if (padded(axis) && (rank != 4 || axis == 0 || axis == (nhwc ? 3 : 1)))
        unsupported(n, fmt::format("pads [{}] of {}: telar pads the spatial axes of NCHW or NHWC",
                                   fmt::join(pads, ", "), shape_str(shape_of(x))));
    if (rank != 4 || (!padded(1) && !padded(2) && !padded(3))) {
      define(n, x);
      return;
    }
    const std::int64_t h = nhwc ? 1 : 2, w = nhwc ? 2 : 3;
    graph::PadAttrs a;
    a.top = around[h][0], a.bottom = around[h][1];
    a.left = around[w][0], a.right = around[w][1];
    a.value = value;
    if (!nhwc) {
      define(n, graph_.add_node(OpKind::Pad, node_name(n), a, {x}));
      return;
    }
    graph::TransposeAttrs to_nchw, to_nhwc;
    to_nchw.perm = {0, 3, 1, 2};
    to_nhwc.perm = {0, 2, 3, 1};
    const ValueId nchw = graph_.add_node(OpKind::Transpose, node_name(n, "/nchw"), to_nchw, {x});
    const ValueId y = graph_.add_node(OpKind::Pad, node_name(n), a, {nchw});
    define(n, graph_.add_node(OpKind::Transpose, node_name(n, "/nhwc"), to_nhwc, {y}));
  }

  // Resize of the spatial axes of NCHW, as PyTorch's F.interpolate exports it (opset 11 on):
  // linear with half-pixel coordinates (align_corners=False) or aligned corners, nearest with
  // asymmetric coordinates rounded down (mode "nearest"); to the `sizes` given, or by `scales`
  // that give whole sizes.
  void resize(const proto::NodeProto& n, Attributes& at) {
    const ValueId x = dynamic(n, 0);
    const Shape& xs = shape_of(x);
    if (n.op_type() == "Upsample" || opset_ < 11)
      unsupported(n,
                  "telar imports Resize from opset 11 on, whose coordinates are PyTorch's; "
                  "export with opset_version=11 or later");
    if (xs.size() != 4)
      unsupported(n, fmt::format("a tensor of {}: telar resizes the spatial axes of N x C x H x W",
                                 shape_str(xs)));
    const std::string mode = at.s("mode", "nearest");
    const std::string coordinates = at.s("coordinate_transformation_mode", "half_pixel");
    const std::string rounding = at.s("nearest_mode", "round_prefer_floor");
    at.f("cubic_coeff_a", -0.75f);      // bicubic only, refused below
    at.f("extrapolation_value", 0.0f);  // tf_crop_and_resize only, refused below
    if (at.i("exclude_outside", 0) != 0 || at.i("antialias", 0) != 0)
      unsupported(n, "exclude_outside or antialias: telar resizes without either");
    if (const std::string policy = at.s("keep_aspect_ratio_policy", "stretch"); policy != "stretch")
      unsupported(n, fmt::format("keep_aspect_ratio_policy '{}': telar resizes to the sizes "
                                 "given (stretch)",
                                 policy));
    graph::ResizeAttrs a;
    const bool half_pixel = coordinates == "half_pixel" || coordinates == "pytorch_half_pixel";
    if (mode == "linear" && (half_pixel || coordinates == "align_corners")) {
      a.mode = graph::ResizeMode::Linear;
      a.align_corners = coordinates == "align_corners";
    } else if (mode == "nearest" && coordinates == "asymmetric" && rounding == "floor") {
      a.mode = graph::ResizeMode::Nearest;
    } else {
      unsupported(n, fmt::format("mode '{}' with coordinate_transformation_mode '{}'{}: telar "
                                 "imports linear with half_pixel, pytorch_half_pixel or "
                                 "align_corners, and nearest with asymmetric and nearest_mode "
                                 "floor (PyTorch's F.interpolate bilinear and nearest)",
                                 mode, coordinates,
                                 mode == "nearest" ? " and nearest_mode '" + rounding + "'" : ""));
    }
    // The axes `sizes` or `scales` name (an attribute from opset 18): the spatial ones, or all.
    std::vector<std::int64_t> axes{0, 1, 2, 3};
    if (opset_ >= 18) axes = at.ints("axes", axes);
    for (auto& axis : axes) axis = axis < 0 ? axis + 4 : axis;
    const bool all = axes == std::vector<std::int64_t>{0, 1, 2, 3};
    if (!all && axes != std::vector<std::int64_t>{2, 3})
      unsupported(n, fmt::format("axes [{}]: telar resizes the spatial axes of N x C x H x W",
                                 fmt::join(axes, ", ")));
    const std::size_t first = all ? 2 : 0;  // where H's entry is
    constexpr std::int64_t kMaxPixels = std::int64_t{1} << 20;  // along one axis
    std::array<std::int64_t, 2> out{};
    // `sizes` where it holds values (opsets 11 and 12 write an empty one beside the scales).
    if (present(n, 3) && constant(n, 3, true).numel() > 0) {
      const Constant& sizes = constant(n, 3, true);
      if (!sizes.integer) unsupported(n, "sizes that are not integers (ONNX's are int64)");
      const auto v = sizes.ints();
      if (v.size() != axes.size())
        unsupported(n, fmt::format("{} sizes for {} axes", v.size(), axes.size()));
      // The batch: read from the input, or the size the file was exported with (telar's first
      // dimension is the batch, whatever it was exported with).
      const bool batch_kept = !all || sizes.batch_at(0) == Constant::Batch::Is ||
                              (sizes.batch_at(0) == Constant::Batch::No && v[0] > 0);
      if (!batch_kept || (all && (sizes.batch_at(1) != Constant::Batch::No || v[1] != xs[1])) ||
          sizes.batch_at(first) != Constant::Batch::No ||
          sizes.batch_at(first + 1) != Constant::Batch::No)
        unsupported(n, fmt::format("sizes [{}] of {}: telar resizes the spatial axes only",
                                   fmt::join(v, ", "), shape_str(xs)));
      out = {v[first], v[first + 1]};
    } else {
      require(present(n, 2), "node '{}' (Resize): neither scales nor sizes is given", n.name());
      const Constant& scales = constant(n, 2);
      if (scales.integer || scales.f.size() != axes.size())
        unsupported(n,
                    fmt::format("scales of {} {} values for {} axes (ONNX's: a float per "
                                "axis)",
                                scales.numel(), scales.integer ? "integer" : "float", axes.size()));
      if (all && (scales.f[0] != 1.0f || scales.f[1] != 1.0f))
        unsupported(n,
                    "scales other than 1 for the batch or the channels: telar resizes the "
                    "spatial axes only");
      for (std::size_t k = 0; k < 2; ++k) {
        // ONNX's size is floor(in * scale), its coordinates mapped by the scale; telar maps them
        // by the sizes: the same where in * scale is whole.
        const double exact = static_cast<double>(xs[2 + k]) * scales.f[first + k];
        if (!(exact >= 1.0 && exact <= static_cast<double>(kMaxPixels)))
          unsupported(
              n, fmt::format("scale {} of an axis of {} pixels", scales.f[first + k], xs[2 + k]));
        out[k] = static_cast<std::int64_t>(std::floor(exact));
        if (exact - static_cast<double>(out[k]) > 1e-4)
          unsupported(n, fmt::format("scale {} of an axis of {} pixels gives {:.4f} pixels: "
                                     "telar resizes to whole sizes; export with size=... "
                                     "instead of scale_factor",
                                     scales.f[first + k], xs[2 + k], exact));
      }
    }
    if (out[0] <= 0 || out[1] <= 0 || out[0] > kMaxPixels || out[1] > kMaxPixels)
      unsupported(n, fmt::format("an output of {}x{} pixels", out[0], out[1]));
    if (out[0] == xs[2] && out[1] == xs[3]) {  // every mode reads each pixel where it is
      define(n, x);
      return;
    }
    // ONNX's pytorch_half_pixel reads the first pixel where it resizes to one; PyTorch, and
    // telar, the middle.
    if (coordinates == "pytorch_half_pixel" &&
        ((out[0] == 1 && xs[2] > 1) || (out[1] == 1 && xs[3] > 1)))
      unsupported(n,
                  "pytorch_half_pixel to an axis of one pixel, which reads the first input "
                  "pixel: telar reads the middle (half_pixel)");
    a.out_h = out[0];
    a.out_w = out[1];
    define(n, graph_.add_node(OpKind::Resize, node_name(n), a, {x}));
  }

  // Add, Sub, Mul, Div of two tensors, or of a tensor and a constant (which becomes a weight of
  // the graph, trainable like the others).
  void binary(const proto::NodeProto& n, OpKind kind) {
    define(n, graph_.add_node(kind, node_name(n), {}, {operand(n, 0, kind), operand(n, 1, kind)}));
  }
  // Operand k of an arithmetic op: computed, or a constant as a graph tensor (of `dims`, its
  // own where not given).
  ValueId operand(const proto::NodeProto& n, int k, OpKind kind, std::optional<Shape> dims = {}) {
    if (!present(n, k) || !known(n.input(k))) return dynamic(n, k);
    Constant c = constant(n, k);
    if (dims) c.dims = *dims;
    return constant_operand(n.input(k), std::move(c), kind);
  }
  // The constant `c` (float, of the shape it will have in the graph) as an operand of `kind`.
  // From scratch: the operand that leaves the other unchanged. A value of a Constant node (an
  // epsilon, GELU's 1/sqrt(2)) stays fixed while training; an initializer (a layer scale)
  // trains.
  ValueId constant_operand(const std::string& name, Constant c, OpKind kind) {
    if (c.integer) {
      c.f.assign(c.i.begin(), c.i.end());
      c.integer = false;
      c.i.clear();
    }
    const Shape dims = c.dims.empty() ? Shape{1} : c.dims;
    const bool scales = kind == OpKind::Mul || kind == OpKind::Div;
    if (!initializers_.count(name)) return fixed(name, c, dims);
    return weight(name, c, dims, scales ? graph::Initializer::ones() : graph::Initializer::zeros());
  }
  // A constant operand of the view `v` (numpy broadcasting against the file's axes) laid out
  // along the axes of v's value, without the batch's: where it varies along a file's axis, that
  // axis is split into its group's axes; nothing where it varies along an axis holding the
  // batch or does not broadcast.
  std::optional<Constant> laid_like(const proto::NodeProto& n, const Constant& c,
                                    const View& v) const {
    const Shape xs = shape_of(v.value);
    const std::size_t rank = v.groups.size();
    if (c.dims.size() > rank) return std::nullopt;
    std::vector<std::int64_t> split;  // c's values, each file axis split as its group
    for (std::size_t i = 0; i < rank; ++i) {
      const std::size_t lead = rank - c.dims.size();
      const std::int64_t size = i < lead ? 1 : c.dims[i - lead];
      std::int64_t group_size = 1;
      bool has_batch = false;
      for (int axis : v.groups[i]) {
        has_batch = has_batch || axis == 0;
        group_size *= axis == 0 ? 1 : xs[static_cast<std::size_t>(axis)];
      }
      if (size != 1 && (has_batch || size != group_size)) return std::nullopt;
      for (int axis : v.groups[i])
        split.push_back(size == 1 ? 1 : xs[static_cast<std::size_t>(axis)]);
    }
    Constant laid = c;
    laid.dims = split;
    const std::vector<int> order = flattened(v.groups);
    std::vector<std::int64_t> perm(order.size());
    for (std::size_t k = 0; k < order.size(); ++k)
      perm[static_cast<std::size_t>(order[k])] = static_cast<std::int64_t>(k);
    laid = onnx::transpose(fmt::format("node '{}' ({})", n.name(), n.op_type()), laid, perm);
    laid.dims.erase(laid.dims.begin());  // the batch's axis, of 1
    while (laid.dims.size() > 1 && laid.dims[0] == 1) laid.dims.erase(laid.dims.begin());
    return laid;
  }

  void concat(const proto::NodeProto& n, Attributes& at) {
    std::int64_t axis = at.i("axis", 1);
    if (n.input_size() == 0) unsupported(n, "a Concat of no inputs");
    std::vector<ValueId> inputs;
    for (int k = 0; k < n.input_size(); ++k) inputs.push_back(dynamic(n, k));
    const auto rank = static_cast<std::int64_t>(shape_of(inputs[0]).size());
    if (axis < 0) axis += rank;
    if (axis < 1 || axis >= rank)
      unsupported(n, fmt::format("axis {} of a rank-{} tensor: telar concatenates along an axis "
                                 "after the batch",
                                 at.i("axis", 1), rank));
    graph::ConcatAttrs a;
    a.axis = static_cast<int>(axis);
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
        set_constant(n, int_constant({at.i("value_int", 0)}, {}));
      } else if (at.has("value_ints")) {
        auto v = at.ints("value_ints", {});
        const auto size = static_cast<std::int64_t>(v.size());
        set_constant(n, int_constant(std::move(v), {size}));
      } else {
        unsupported(n, "a Constant without 'value', 'value_float', 'value_int' or 'value_ints'");
      }
      return true;
    }
    if (op == "Shape" && present(n, 0) && views_.count(n.input(0))) {
      // Of a view: its dimensions with the batch's marked (B alone, or times the rest).
      const View& v = views_.at(n.input(0));
      const auto dims = view_dims(shape_of(v.value), v.groups);
      const auto rank = static_cast<std::int64_t>(dims.size());
      const std::int64_t start = clamped_index(at.i("start", 0), rank),
                         end = std::max(start, clamped_index(at.i("end", rank), rank));
      Constant c = int_constant({}, {end - start});
      for (std::int64_t d = start; d < end; ++d) {
        const auto& dim = dims[static_cast<std::size_t>(d)];
        c.i.push_back(dim.size);
        c.batch.push_back(!dim.batch ? Constant::Batch::No
                          : v.groups[static_cast<std::size_t>(d)].size() == 1
                              ? Constant::Batch::Is
                              : Constant::Batch::Times);
      }
      set_constant(n, std::move(c));
      return true;
    }
    if (op == "Shape" && present(n, 0) && (values_.count(n.input(0)) || known(n.input(0)))) {
      // Of a computed tensor, the batch size stands as 1 and its element is marked (only a
      // Reshape's first may use it); of a constant, its dimensions, which the batch size never
      // changes (only its values may).
      const bool computed = values_.count(n.input(0)) > 0;
      const Shape& s = computed ? shape_of(values_.at(n.input(0))) : constants_.at(n.input(0)).dims;
      const auto rank = static_cast<std::int64_t>(s.size());
      const std::int64_t start = clamped_index(at.i("start", 0), rank),
                         end = std::max(start, clamped_index(at.i("end", rank), rank));
      Constant c = int_constant({s.begin() + start, s.begin() + end}, {end - start});
      if (computed) {
        for (std::int64_t d = start; d < end; ++d)
          c.batch.push_back(d == 0 ? Constant::Batch::Is : Constant::Batch::No);
        if (start == 0) c.i[0] = 1;
      }
      set_constant(n, std::move(c));
      return true;
    }
    if (!all_inputs_constant(n)) return false;
    if (!fold_values(n, at)) return false;
    // Every fold carries its inputs' batch marks along; one that does not is caught here.
    Constant& out = constants_.at(n.output(0));
    // Folds are shape arithmetic and small constants: Swin-T at 224×224, whose window masks and
    // relative-position biases fold, makes the most seen, 2.4 M values in all. A file whose
    // folds go on far past that (a damaged one: fold after fold of millions of values) would
    // keep import busy for seconds.
    constexpr std::int64_t kMaxFoldedInAll = std::int64_t{1} << 24;
    folded_values_ += out.numel();
    if (folded_values_ > kMaxFoldedInAll)
      unsupported(n, fmt::format("the file's constant folds make more than {} values in all; "
                                 "telar folds shape computations and small constants, not "
                                 "tensors of this size (the file may be damaged)",
                                 kMaxFoldedInAll));
    bool from_batch = false;
    for (int k = 0; k < n.input_size(); ++k)
      if (present(n, k)) from_batch = from_batch || constants_.at(n.input(k)).depends_on_batch();
    if (from_batch && out.batch.empty()) out.batch.assign(static_cast<std::size_t>(out.numel()), Constant::Batch::From);
    return true;
  }

  // An input of a folded node: a constant, batch-dependent or not (fold_constant flags the
  // result).
  const Constant& folded_input(const proto::NodeProto& n, int k) const {
    return constant(n, k, true);
  }

  bool fold_values(const proto::NodeProto& n, Attributes& at) {
    const std::string& op = n.op_type();
    const std::string who = fmt::format("node '{}' ({})", n.name(), op);
    if (op == "Identity") {
      set_constant(n, folded_input(n, 0));
      return true;
    }
    if (op == "Cast") {
      const std::int64_t to = at.i("to", proto::TensorProto::FLOAT);
      CastTo cast_to = CastTo::Float;
      if (to == proto::TensorProto::INT64 || to == proto::TensorProto::INT32)
        cast_to = CastTo::Integer;
      else if (to == proto::TensorProto::BOOL)
        cast_to = CastTo::Bool;
      else if (to != proto::TensorProto::FLOAT && to != proto::TensorProto::DOUBLE)
        unsupported(n, fmt::format("a Cast of a constant to {}", type_name(static_cast<int>(to))));
      set_constant(n, onnx::cast(folded_input(n, 0), cast_to));
      return true;
    }
    if (op == "Slice" && opset_ >= 10) {
      const Constant& data = folded_input(n, 0);
      // Bounds that depend on the batch size are refused (constant() without batch_ok).
      const auto starts = constant(n, 1).ints(), ends = constant(n, 2).ints();
      std::vector<std::int64_t> axes, steps(starts.size(), 1);
      for (std::size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<std::int64_t>(k));
      if (present(n, 3)) axes = constant(n, 3).ints();
      if (present(n, 4)) steps = constant(n, 4).ints();
      set_constant(n, onnx::slice(who, data, starts, ends, axes, steps));
      return true;
    }
    if (op == "Reshape") {  // of a constant: the values in the same order
      Constant c = folded_input(n, 0);
      const Constant& shape = folded_input(n, 1);
      if (shape.depends_on_batch()) return false;
      const bool allowzero = at.i("allowzero", 0) != 0;
      auto dims = shape.ints();
      std::int64_t known = 1;
      int infer_at = -1;
      for (std::size_t k = 0; k < dims.size(); ++k) {
        if (dims[k] == 0 && !allowzero && k < c.dims.size()) dims[k] = c.dims[k];
        if (dims[k] == -1)
          infer_at = static_cast<int>(k);
        else
          known = times(n, known, dims[k]);
      }
      if (infer_at >= 0 && known > 0) dims[static_cast<std::size_t>(infer_at)] = c.numel() / known;
      if (shape_numel(dims) != c.numel())
        unsupported(
            n, fmt::format("a Reshape of {} values to [{}]", c.numel(), fmt::join(dims, ", ")));
      c.dims = std::move(dims);
      set_constant(n, std::move(c));
      return true;
    }
    if (op == "ConstantOfShape") {
      const Constant& shape = constant(n, 0);  // an output sized by the batch is not folded
      Constant c = at.tensor("value") ? read_tensor(*at.tensor("value"), dir_) : Constant{};
      if (!at.tensor("value")) c.f = {0.0f};
      if (c.numel() != 1) unsupported(n, "a 'value' of more than one element");
      c.dims = {};
      set_constant(n, onnx::expand(who, c, shape.ints()));
      return true;
    }
    if (op == "Expand") {  // of a constant to a fixed shape (over the batch: expand())
      const Constant& shape = folded_input(n, 1);
      if (shape.depends_on_batch()) return false;
      set_constant(n, onnx::expand(who, folded_input(n, 0), shape.ints()));
      return true;
    }
    if (op == "Equal") {
      set_constant(n, onnx::equal(who, folded_input(n, 0), folded_input(n, 1)));
      return true;
    }
    if (op == "Where") {
      set_constant(n, onnx::where(who, folded_input(n, 0), folded_input(n, 1), folded_input(n, 2)));
      return true;
    }
    if (op == "Not") {
      set_constant(n, onnx::logical_not(who, folded_input(n, 0)));
      return true;
    }
    if (op == "Gather") {
      set_constant(n, onnx::gather(who, folded_input(n, 0), folded_input(n, 1), at.i("axis", 0)));
      return true;
    }
    if (op == "Transpose") {
      set_constant(n, onnx::transpose(who, folded_input(n, 0), at.ints("perm", {})));
      return true;
    }
    if (op == "Range") {  // of a length known at import (constant() refuses the batch's)
      set_constant(n, onnx::range(who, constant(n, 0), constant(n, 1), constant(n, 2)));
      return true;
    }
    if (op == "ScatterND") {
      if (at.s("reduction", "none") != "none")
        unsupported(n, "telar folds ScatterND without a reduction");
      set_constant(
          n, onnx::scatter_nd(who, folded_input(n, 0), folded_input(n, 1), folded_input(n, 2)));
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
      std::vector<const Constant*> parts;
      for (int k = 0; k < n.input_size(); ++k) parts.push_back(&folded_input(n, k));
      set_constant(n, onnx::concat(who, parts, at.i("axis", 0)));
      return true;
    }
    static const std::map<std::string, Arithmetic> kFolded = {
        {"Add", Arithmetic::Add}, {"Sub", Arithmetic::Sub}, {"Mul", Arithmetic::Mul},
        {"Div", Arithmetic::Div}, {"Pow", Arithmetic::Pow}, {"Mod", Arithmetic::Mod}};
    if (const auto kind = kFolded.find(op); kind != kFolded.end()) {
      const bool fmod = op == "Mod" && at.i("fmod", 0) != 0;
      set_constant(n, onnx::arithmetic(who, fmod ? Arithmetic::FMod : kind->second,
                                       folded_input(n, 0), folded_input(n, 1)));
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
  std::map<std::string, View> views_;  // tensors of the file whose batch is moved or merged
  std::map<std::string, std::string> internal_;  // outputs telar computes itself, described
  std::set<std::string> initializers_;            // the file's weights (not Constant nodes)
  std::vector<ValueId> fixed_;                    // buffers holding constants of the computation
  std::int64_t folded_values_ = 0;                // made by constant folds so far
};

}  // namespace

void check_feed(const Shape& feed, const Shape& input) {
  const bool fits =
      feed == input ||
      (feed.size() == 3 && input.size() == 3 && (feed[0] == input[0] || feed[0] == 1) &&
       feed[1] <= input[1] && feed[2] <= input[2]);
  require(fits,
          "samples of {} cannot be fed to the model's input {}: telar replicates one channel and "
          "centres a smaller image in zeros, no more (export the model for the data's shape, or "
          "give --input CxHxW where its shape is dynamic)",
          shape_str(feed), shape_str(input));
}

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
