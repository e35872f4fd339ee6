#pragma once
// What NetAdapt reduces: a model's latency on a target (measured with telar bench's method: a
// warm-up by time, then timed batch-1 forwards, their median; on a simulated accelerator its
// cycles at 1 GHz), its multiply-accumulates per sample, or its parameter count.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "adapt/lut.hpp"
#include "backend/backend.hpp"
#include "backend/measure.hpp"
#include "graph/graph.hpp"
#include "graph/parameters.hpp"

namespace telar::adapt {

enum class ResourceKind : std::uint8_t { Latency, Macs, Params };
std::string_view resource_name(ResourceKind kind);  // "latency", "macs", "params"
ResourceKind parse_resource(std::string_view text);

class ResourceMeter {
 public:
  // `target` and `precision` matter for latency only, `measure` how long each measurement runs.
  ResourceMeter(ResourceKind kind, std::string target = "cpu",
                backend::Precision precision = backend::Precision::FP32,
                backend::MeasureOptions measure = {0.05, 0.3, 10});

  ResourceKind kind() const { return kind_; }
  // Latency from a look-up table instead of measurements (adapt/lut.hpp): refused when the table
  // was built on another target or precision.
  void use_table(std::shared_ptr<const LatencyTable> table, LutInterpolation interpolation);
  // Compiles the model on the target at the precision (latency measured, not from a table)
  // without running it: what the target refuses (a missing configuration file, a precision it
  // lacks) is refused here, before a run directory is made. Nothing for other resources.
  void check_target(const graph::Graph& graph, const graph::ParameterSet& weights) const;
  // The model's resource: milliseconds, MACs per sample or trainable parameters.
  double operator()(const graph::Graph& graph, const graph::ParameterSet& weights) const;
  // "ms", "MACs" or "parameters".
  std::string_view unit() const;
  // Whether a figure needs the weights: a measured latency compiles
  // the model with them; counts and table look-ups need the structure only.
  bool needs_weights() const { return kind_ == ResourceKind::Latency && !table_; }
  // Whether a figure is a timing, which varies from one measurement to the next: a latency
  // measured on the CPU or a GPU (a table's estimate, a simulator's cycles and the counts are
  // the same every time).
  bool timed() const;
  // How many measurements (latency) or counts were taken.
  std::int64_t calls() const { return calls_; }

 private:
  // The model compiled for inference on the target at batch 1, and its input.
  std::unique_ptr<backend::Executable> compile(const graph::Graph& graph,
                                               graph::ParameterSet& weights, Tensor& x) const;

  ResourceKind kind_;
  std::string target_;
  backend::Precision precision_;
  backend::MeasureOptions measure_;
  mutable std::int64_t calls_ = 0;
  std::shared_ptr<const LatencyTable> table_;
  LutInterpolation interpolation_ = LutInterpolation::Bilinear;
};

}  // namespace telar::adapt
