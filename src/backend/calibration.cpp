#include "backend/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/inference.hpp"
#include "core/error.hpp"
#include "optimize/rewriter.hpp"

namespace telar::backend {

namespace {

// The graph compiled for inference with each fused residual sum taken apart again: the
// convolution writes "<its output>/primitive" (the value before the sum), an Add and the
// activation follow and write the fused output's name. Every value of the compiled graph is
// there with its name, and calibration also sees what a convolution computes before its sum
// (which the ONNX export's QDQ form quantizes).
optimize::Rewritten with_sums_apart(const graph::Graph& g, const graph::ParameterSet& params) {
  using graph::OpKind;
  optimize::GraphRewriter r(g, params);
  std::vector<std::pair<graph::ValueId, std::string>> names;  // new value -> its name
  for (const graph::Node& n : g.nodes()) {
    if (n.kind != OpKind::Conv2d || !n.attr<graph::Conv2dAttrs>().post.sum) {
      r.copy(n);
      continue;
    }
    graph::Conv2dAttrs a = n.attr<graph::Conv2dAttrs>();
    const graph::PostOps post = a.post;
    a.post = {};
    std::vector<graph::ValueId> in = r.map_inputs(n);
    const graph::ValueId summand = in.back();
    in.pop_back();
    const std::string& name = g.value(n.outputs.at(0)).name;
    const graph::ValueId conv = r.add(OpKind::Conv2d, n.name, a, std::move(in));
    graph::ValueId out = r.add(OpKind::Add, n.name + "/sum", {}, {conv, summand});
    if (post.activation != OpKind::Count)
      out = r.add(post.activation, n.name + "/activation", post.eltwise, {out});
    r.redirect(n.outputs.at(0), out);
    names.emplace_back(conv, name + "/primitive");
    names.emplace_back(out, name);
  }
  optimize::Rewritten apart = r.finish(static_cast<int>(names.size() / 2));
  for (const auto& [id, name] : names) apart.graph.value(id).name = name;
  return apart;
}

// Percentile calibration's histogram of magnitudes, per value, over [0, the largest seen].
constexpr int kBins = 2048;

struct Observed {
  explicit Observed(std::string value) : name(std::move(value)) {}
  std::string name;
  float min = std::numeric_limits<float>::infinity();
  float max = -std::numeric_limits<float>::infinity();
  std::vector<std::uint64_t> histogram;
  std::uint64_t count = 0;
};

void add_range(Observed& o, const Tensor& t) {
  const float* x = t.f32();
  const std::int64_t n = t.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) continue;  // e.g. a max pool's -inf padding
    o.min = std::min(o.min, x[i]);
    o.max = std::max(o.max, x[i]);
  }
}

float magnitude(const Observed& o) {
  return std::max(std::fabs(o.min), std::fabs(o.max));
}

void add_histogram(Observed& o, const Tensor& t) {
  if (o.histogram.empty()) o.histogram.assign(kBins, 0);
  const float top = magnitude(o);
  if (top <= 0.0f) return;
  const float per_bin = static_cast<float>(kBins) / top;
  const float* x = t.f32();
  const std::int64_t n = t.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) continue;
    ++o.count;
    const int bin = std::min(kBins - 1, static_cast<int>(std::fabs(x[i]) * per_bin));
    ++o.histogram[static_cast<std::size_t>(bin)];
  }
}

// The range calibration settles on for one value.
ValueRange range_of(const Observed& o, const CalibrationOptions& options) {
  if (options.method == CalibrationMethod::MinMax || o.count == 0) return {o.min, o.max};
  const auto keep = static_cast<double>(o.count) * options.percentile / 100.0;
  std::uint64_t seen = 0;
  int bin = 0;
  for (; bin < kBins - 1; ++bin) {
    seen += o.histogram[static_cast<std::size_t>(bin)];
    if (static_cast<double>(seen) >= keep) break;
  }
  const float edge = magnitude(o) * static_cast<float>(bin + 1) / static_cast<float>(kBins);
  return {o.min >= 0.0f ? o.min : std::max(o.min, -edge), std::min(o.max, edge)};
}

}  // namespace

QuantizationTable calibrate(const graph::Graph& graph, const graph::ParameterSet& params,
                            std::span<const Tensor> batches, const CalibrationOptions& options) {
  require(graph.inputs().size() == 1,
          "model '{}' takes {} inputs; calibration feeds one input batch", graph.name(),
          graph.inputs().size());
  require(!batches.empty(), "calibration needs at least one batch (--calibration-batches)");
  require(options.percentile > 0.0 && options.percentile <= 100.0,
          "--percentile {} is out of range; give a share of the values in (0, 100], e.g. 99.99",
          options.percentile);
  const graph::Value& input = graph.value(graph.inputs()[0]);
  for (const Tensor& b : batches)
    require(b.rank() == static_cast<int>(input.shape.size()) &&
                std::equal(input.shape.begin() + 1, input.shape.end(), b.shape().begin() + 1),
            "the calibration data's samples are {} but model '{}' takes {}; give data of the "
            "model's input shape",
            shape_str(Shape(b.shape().begin() + 1, b.shape().end())), graph.name(),
            shape_str(Shape(input.shape.begin() + 1, input.shape.end())));

  // The graph the cpu compiles for inference, its residual sums apart, with every f32 value a
  // node computes as an extra output.
  const optimize::InferenceGraph compiled =
      optimize::optimize_for_inference(graph, params, *inference_passes(parse_backend_spec("cpu")));
  optimize::Rewritten apart = with_sums_apart(compiled.graph, compiled.params);
  graph::Graph observed = std::move(apart.graph);
  graph::ParameterSet weights = std::move(apart.params);
  std::vector<Observed> values;
  std::vector<std::size_t> output_of;  // the observed output index of each entry of `values`
  values.emplace_back(input.name);
  for (const graph::Node& node : observed.nodes())
    for (graph::ValueId v : node.outputs) {
      if (observed.value(v).dtype != DType::F32) continue;
      const auto& outs = observed.outputs();
      const auto at = std::find(outs.begin(), outs.end(), v);
      output_of.push_back(static_cast<std::size_t>(at - outs.begin()));
      if (at == outs.end()) observed.add_output(v);
      values.emplace_back(observed.value(v).name);
    }
  CompileOptions co;
  co.inference = true;
  auto exe = compile(parse_backend_spec("cpu"), observed, weights, co);

  const int passes = options.method == CalibrationMethod::Percentile ? 2 : 1;
  const int total = passes * static_cast<int>(batches.size());
  int done = 0;
  for (int pass = 0; pass < passes; ++pass) {
    for (const Tensor& batch : batches) {
      const auto observe = pass == 0 ? add_range : add_histogram;
      observe(values[0], batch);
      exe->forward(std::span<const Tensor>(&batch, 1), Mode::Eval);
      for (std::size_t i = 1; i < values.size(); ++i)
        observe(values[i], exe->output(output_of[i - 1]));
      if (options.progress) options.progress(++done, total);
    }
  }
  QuantizationTable table;
  table.method = options.method;
  table.percentile = options.percentile;
  for (const Observed& o : values)
    if (o.min <= o.max) table.ranges[o.name] = range_of(o, options);  // else never finite
  return table;
}

std::shared_ptr<const QuantizationTable> latency_calibration(const graph::Graph& graph,
                                                             const graph::ParameterSet& params,
                                                             Precision precision,
                                                             const Tensor& input) {
  if (precision != Precision::INT8) return nullptr;
  return std::make_shared<QuantizationTable>(
      calibrate(graph, params, std::span<const Tensor>(&input, 1), {}));
}

bool quantized_layer(const graph::Node& node) {
  return node.kind == graph::OpKind::Conv2d || node.kind == graph::OpKind::Linear;
}

std::vector<LayerSensitivity> layer_sensitivity(const graph::Graph& graph,
                                                const graph::ParameterSet& params,
                                                const QuantizationTable& table,
                                                const Tensor& batch) {
  graph::ParameterSet weights = params;  // compiling takes them mutable; inference changes nothing
  const std::span<const Tensor> inputs(&batch, 1);
  const auto output_at = [&](Precision precision, std::shared_ptr<const QuantizationTable> t) {
    CompileOptions options;
    options.precision = precision;
    options.quantization = std::move(t);
    auto exe = compile_for_inference(parse_backend_spec("cpu"), graph, weights, true, options);
    exe->forward(inputs, Mode::Eval);
    return exe->output(0).clone();
  };
  const Tensor reference = output_at(Precision::FP32, nullptr);
  double norm = 0.0;
  for (std::int64_t i = 0; i < reference.numel(); ++i)
    norm += static_cast<double>(reference.f32()[i]) * reference.f32()[i];
  norm = std::sqrt(norm);

  std::vector<std::string> layers;
  const optimize::InferenceGraph compiled = optimize::optimize_for_inference(graph, params);
  for (const graph::Node& n : compiled.graph.nodes())
    if (quantized_layer(n) && !table.excluded.count(n.name)) layers.push_back(n.name);
  std::vector<LayerSensitivity> out;
  for (const std::string& layer : layers) {
    auto alone = std::make_shared<QuantizationTable>(table);
    for (const std::string& other : layers)
      if (other != layer) alone->excluded.insert(other);
    const Tensor y = output_at(Precision::INT8, alone);
    double diff = 0.0;
    for (std::int64_t i = 0; i < y.numel(); ++i) {
      const double d = static_cast<double>(y.f32()[i]) - reference.f32()[i];
      diff += d * d;
    }
    out.push_back({layer, norm > 0.0 ? std::sqrt(diff) / norm : std::sqrt(diff)});
  }
  std::stable_sort(
      out.begin(), out.end(),
      [](const LayerSensitivity& a, const LayerSensitivity& b) { return a.error > b.error; });
  return out;
}

}  // namespace telar::backend
