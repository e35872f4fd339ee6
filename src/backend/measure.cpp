#include "backend/measure.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/threads.hpp"
#include "graph/dump.hpp"

namespace telar::backend {

namespace {

void fill_caches_with_other_data() {
  static const std::size_t bytes = [] {
    const long l2 = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
    return static_cast<std::size_t>(l2 > 0 ? 2 * l2 : 4 << 20);
  }();
  static unsigned char stamp = 0;
  ++stamp;
  on_each_compute_thread([] {
    thread_local std::vector<unsigned char> other(bytes);
    std::memset(other.data(), stamp, other.size());
  });
}

}  // namespace

std::vector<double> TimedRuns::chosen() const {
  std::vector<double> out;
  for (std::size_t i = 0; i < ms.size(); ++i)
    if (!probe[i]) out.push_back(ms[i]);
  return out;
}

std::int64_t TimedRuns::probes() const {
  return std::count(probe.begin(), probe.end(), true);
}

TimedRuns measure_forward(Executable& exe, std::span<const Tensor> inputs,
                          const MeasureOptions& options) {
  Stopwatch warmup;
  for (int w = 0; w < options.warmup_runs || warmup.seconds() < options.warmup_seconds; ++w)
    exe.forward(inputs, Mode::Eval);
  TimedRuns runs;
  std::int64_t chosen = 0;
  Stopwatch total;
  while (chosen < options.min_iterations || total.seconds() < options.duration_seconds) {
    if (options.cold_caches) fill_caches_with_other_data();
    Stopwatch one;
    exe.forward(inputs, Mode::Eval);
    runs.ms.push_back(one.seconds() * 1e3);
    runs.probe.push_back(exe.last_forward_was_probe());
    chosen += !runs.probe.back();
  }
  return runs;
}

namespace {

// Sums the time between each node's begin and end, by node, in the order they first ran.
class NodeClock final : public NodeObserver {
 public:
  void on_node_begin(const graph::Node&, Pass) override { started_ = Clock::now(); }
  void on_node_end(const graph::Node& node, Pass) override {
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - started_).count();
    auto [it, added] = index_.emplace(&node, times_.size());
    if (added) times_.push_back({node.name, node.kind, graph::describe_attrs(node), 0.0});
    times_[it->second].ms += ms;
  }
  std::vector<NodeTime> take() {
    index_.clear();
    return std::exchange(times_, {});
  }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point started_;
  std::map<const graph::Node*, std::size_t> index_;
  std::vector<NodeTime> times_;
};

}  // namespace

std::vector<NodeTime> node_times(Executable& exe, std::span<const Tensor> inputs, int runs) {
  if (runs < 1) fail("internal: node_times needs at least one run, got {}", runs);
  NodeClock clock;
  struct Restore {  // the caller's observer back, also when a forward throws
    Executable& exe;
    NodeObserver* before;
    ~Restore() { exe.set_observer(before); }
  } restore{exe, exe.observer()};
  exe.set_observer(&clock);
  exe.forward(inputs, Mode::Eval);  // the plan without splits, made and warmed
  clock.take();
  for (int r = 0; r < runs; ++r) exe.forward(inputs, Mode::Eval);
  std::vector<NodeTime> times = clock.take();
  for (NodeTime& t : times) t.ms /= runs;
  return times;
}

namespace {

// A byte count summed in double, as int64: a plan too large for any machine compares as too
// large (the largest int64) instead of wrapping around.
std::int64_t saturated_bytes(double bytes) {
  return bytes >= 9.0e18 ? std::numeric_limits<std::int64_t>::max()
                         : static_cast<std::int64_t>(bytes);
}

// The bytes of value `v` at `batch` (in double, as the sums above); 0 for a dynamic input,
// which the caller holds.
double value_bytes(const graph::Value& v, std::int64_t batch) {
  const Shape shape = bind_batch(v.shape, batch);
  return shape_is_concrete(shape)
             ? static_cast<double>(shape_numel(shape)) * static_cast<double>(dtype_size(v.dtype))
             : 0.0;
}

}  // namespace

std::int64_t inference_memory_bytes(const graph::Graph& graph, std::int64_t batch) {
  double bytes = 0.0;
  for (const graph::Value& v : graph.values()) bytes += value_bytes(v, batch);
  return saturated_bytes(bytes);
}

std::int64_t inference_peak_bytes(const graph::Graph& graph, std::int64_t batch) {
  const auto bytes_of = [&](const graph::Value& v) { return value_bytes(v, batch); };
  const std::size_t end = graph.nodes().size();
  std::vector<std::size_t> last(graph.values().size(), 0);  // by value: its last reader
  for (std::size_t k = 0; k < end; ++k)
    for (const auto* values : {&graph.nodes()[k].outputs, &graph.nodes()[k].inputs})
      for (graph::ValueId v : *values) last[static_cast<std::size_t>(v)] = k;
  for (graph::ValueId out : graph.outputs()) last[static_cast<std::size_t>(out)] = end;
  double fixed = 0.0, peak = 0.0;
  for (const graph::Value& v : graph.values())
    if (v.kind != graph::ValueKind::Activation) fixed += bytes_of(v);
  for (std::size_t k = 0; k < end; ++k) {
    double live = 0.0;  // what nodes 0..k wrote and nodes k.. still read
    for (std::size_t j = 0; j <= k; ++j)
      for (graph::ValueId out : graph.nodes()[j].outputs)
        if (last[static_cast<std::size_t>(out)] >= k) live += bytes_of(graph.value(out));
    peak = std::max(peak, live);
  }
  return saturated_bytes(fixed + peak);
}

std::int64_t training_memory_bytes(const graph::Graph& graph, std::int64_t batch,
                                   std::int64_t optimizer_slots) {
  // In double: an estimate to compare with a limit, which a model too large for any machine
  // must not wrap around.
  const auto bytes_of = [&](graph::ValueId id) { return value_bytes(graph.value(id), batch); };
  double parameters = 0.0;
  for (graph::ValueId id : graph.parameters()) parameters += bytes_of(id);
  // Activations' gradients share memory where their lifetimes do not meet: at least those one
  // node's backward reads and writes at once (its output's and its activation inputs').
  double gradients = 0.0;
  for (const graph::Node& node : graph.nodes()) {
    double here = 0.0;
    for (const auto* values : {&node.outputs, &node.inputs})
      for (graph::ValueId id : *values)
        if (graph.value(id).kind == graph::ValueKind::Activation) here += bytes_of(id);
    gradients = std::max(gradients, here);
  }
  // A ReLU or ReLU6 may write over an input that is its alone (the CPU's training plans do where
  // the input's producer allows): its output takes no memory of its own.
  double values = static_cast<double>(inference_memory_bytes(graph, batch));
  const auto& outputs = graph.outputs();
  for (const graph::Node& node : graph.nodes()) {
    if (node.kind != graph::OpKind::ReLU && node.kind != graph::OpKind::ReLU6) continue;
    const graph::ValueId in = node.inputs.at(0);
    if (graph.value(in).kind == graph::ValueKind::Activation && graph.consumers(in).size() == 1 &&
        std::find(outputs.begin(), outputs.end(), in) == outputs.end())
      values -= bytes_of(node.outputs.at(0));
  }
  return saturated_bytes(values + gradients +
                         parameters * static_cast<double>(1 + optimizer_slots));
}

}  // namespace telar::backend
