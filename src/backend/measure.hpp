#pragma once
// How telar measures a compiled model's speed (telar bench, and adaptation's latency): warm-up
// by time, then timed evaluation-mode forward passes until both a duration and a number of
// iterations are reached; and what a plan for a batch size will hold in memory.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backend/executable.hpp"

namespace telar::backend {

struct MeasureOptions {
  double warmup_seconds = 0.2;  // untimed runs first, for this long and at least warmup_runs
  double duration_seconds = 3.0;
  int min_iterations = 10;
  // Before each timed run (outside its time) every compute thread writes twice its core's L2
  // cache of other data, so that the model's weights and activations come from further out, as
  // a layer's do inside a larger model (what a latency table measures a layer alone for).
  bool cold_caches = false;
  int warmup_runs = 1;  // telar infer's --warmup (0 or more)
};

// The timed runs in order: each one's latency in milliseconds, and whether it was a probe of
// settings the backend did not choose (Executable::last_forward_was_probe: the CPU's thread
// choice tries the other thread count now and then). The timing goes on until `min_iterations`
// runs that were not probes are in.
struct TimedRuns {
  std::vector<double> ms;
  std::vector<bool> probe;
  // The latencies of the runs on the chosen settings: what a deployment sees, whose figures a
  // short benchmark would otherwise mix with its few probes.
  std::vector<double> chosen() const;
  std::int64_t probes() const;
};
TimedRuns measure_forward(Executable& exe, std::span<const Tensor> inputs,
                          const MeasureOptions& options);

// The time each node of the compiled graph takes in an evaluation-mode forward: the mean over
// `runs` forwards (after one untimed) of a clock read around each node, in milliseconds; the
// nodes in the order they ran, each with its op. The plan runs whole (no batch split, no thread
// adaptation: an observer sees one node at a time), so the sum can differ a little from the
// latency measure_forward gives. For a backend whose kernels run synchronously (the CPU).
struct NodeTime {
  std::string node;
  graph::OpKind kind{};
  std::string detail;  // graph::describe_attrs: "768->3072 +GELU"
  double ms = 0.0;
};
std::vector<NodeTime> node_times(Executable& exe, std::span<const Tensor> inputs, int runs);

// The bytes an inference plan of `graph` at `batch` holds: its weights and a buffer per value
// (the CPU plan's layout; blocked layouts pad a little more).
std::int64_t inference_memory_bytes(const graph::Graph& graph, std::int64_t batch);
// The same where values that do not live at once share memory (the CPU's inference plans): its
// weights and inputs, and the most activation bytes alive at one node, in the graph's order
// (a value lives from its node to its last reader; the outputs to the end).
std::int64_t inference_peak_bytes(const graph::Graph& graph, std::int64_t batch);

// The bytes training `graph` (with its loss) at `batch` holds at least: a buffer per value (as
// inference_memory_bytes; backward reads them) but for a ReLU's output over an input that is
// its alone (it may be written in place), the parameters' gradients and `optimizer_slots`
// state tensors per parameter, and the activations' gradients one node's backward touches at
// once (its output's and its activation inputs'; the others share that memory in turn). The
// estimates saturate at the largest int64 instead of wrapping around.
std::int64_t training_memory_bytes(const graph::Graph& graph, std::int64_t batch,
                                   std::int64_t optimizer_slots);

}  // namespace telar::backend
