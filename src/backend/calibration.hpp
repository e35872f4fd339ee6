#pragma once
// Calibration for Precision::INT8 (post-training static quantization): the model compiled for
// inference on the cpu in fp32 runs over calibration batches, and the range of every value it
// computes (and of its input) is recorded by name, as the int8 kernels look them up.
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/quantization.hpp"
#include "core/tensor.hpp"
#include "graph/graph.hpp"
#include "graph/parameters.hpp"

namespace telar::backend {

struct CalibrationOptions {
  CalibrationMethod method = CalibrationMethod::MinMax;
  double percentile = 99.99;  // Percentile: in (0, 100]
  // Called after each batch of each pass (percentile takes two passes over the batches).
  std::function<void(int done, int total)> progress;
};

// `batches`: inputs of the model's one input, each a whole batch. Throws telar::Error for a
// model with several inputs and for batches of another sample shape than the model's.
QuantizationTable calibrate(const graph::Graph& graph, const graph::ParameterSet& params,
                            std::span<const Tensor> batches, const CalibrationOptions& options);

// Whether `node` (of a graph compiled for inference) is a layer int8 quantizes with its own
// weight scales, a convolution or a Linear: what --exclude and the sensitivity list name.
bool quantized_layer(const graph::Node& node);

// How much quantizing one layer alone costs: the relative error ||y_int8 - y_fp32|| /
// ||y_fp32|| of the model's first output on `batch` with only that convolution or Linear in
// int8 (the others, and the table's excluded nodes, in fp32). Sorted from the most sensitive;
// what telar quantize --sensitivity prints, to choose --exclude.
struct LayerSensitivity {
  std::string node;  // as named in the graph compiled for inference
  double error = 0.0;
};
std::vector<LayerSensitivity> layer_sensitivity(const graph::Graph& graph,
                                                const graph::ParameterSet& params,
                                                const QuantizationTable& table,
                                                const Tensor& batch);

// For measurements of speed only (adaptation's latency, latency tables, cross-evaluation) at
// `precision`: int8 needs ranges, and these are `input`'s (e.g. a random batch) — the speed of
// the int8 kernels does not depend on them, their accuracy does (telar quantize calibrates on
// real data). nullptr for other precisions.
std::shared_ptr<const QuantizationTable> latency_calibration(const graph::Graph& graph,
                                                             const graph::ParameterSet& params,
                                                             Precision precision,
                                                             const Tensor& input);

}  // namespace telar::backend
