#pragma once
// A model compiled for one target at one precision, and one measured point of it: what telar
// bench and telar crosseval measure, the same way (backend/measure.hpp; a sim target's time is
// its cycles at a clock).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "backend/backend.hpp"
#include "backend/measure.hpp"
#include "cli/bench_report.hpp"
#include "graph/graph.hpp"
#include "graph/parameters.hpp"

namespace telar::cli {

struct BenchTarget {
  std::string text;  // as given: "cpu", "sim:configs/x.cfg"
  backend::BackendSpec spec;
  backend::Precision precision = backend::Precision::FP32;
  std::unique_ptr<backend::Executable> exe;
  std::optional<double> accuracy;  // bench --accuracy: on the test set
};

// `graph` compiled for inference on `text` at `precision` (refused first where the target
// cannot run here; int8 takes a quantized model's calibration); `weights` must outlive it.
BenchTarget compile_target(
    const std::string& text, backend::Precision precision, const graph::Graph& graph,
    graph::ParameterSet& weights, bool optimize = true,
    std::shared_ptr<const backend::QuantizationTable> quantization = nullptr);

// The target's latency on input `x` (a batch of `batch`): timed runs, or one simulated figure.
BenchPoint measure_target(BenchTarget& target, const Tensor& x, std::int64_t batch,
                          const backend::MeasureOptions& options, double clock_ghz);

}  // namespace telar::cli
