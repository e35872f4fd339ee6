#pragma once
// Calibration for Precision::INT8 (post-training static quantization): the model compiled for
// inference on the cpu in fp32 runs over calibration batches, and the range of every value it
// computes (and of its input) is recorded by name, as the int8 kernels look them up.
#include <functional>
#include <span>

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

}  // namespace telar::backend
