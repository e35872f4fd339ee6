#include "backend/measure.hpp"

#include "core/clock.hpp"

namespace telar::backend {

std::vector<double> measure_forward_ms(Executable& exe, std::span<const Tensor> inputs,
                                       const MeasureOptions& options) {
  Stopwatch warmup;
  do {
    exe.forward(inputs, Mode::Eval);
  } while (warmup.seconds() < options.warmup_seconds);
  std::vector<double> ms;
  Stopwatch total;
  while (static_cast<int>(ms.size()) < options.min_iterations ||
         total.seconds() < options.duration_seconds) {
    Stopwatch one;
    exe.forward(inputs, Mode::Eval);
    ms.push_back(one.seconds() * 1e3);
  }
  return ms;
}

std::int64_t inference_memory_bytes(const graph::Graph& graph, std::int64_t batch) {
  std::int64_t bytes = 0;
  for (const graph::Value& v : graph.values()) {
    if (!shape_is_concrete(bind_batch(v.shape, batch))) continue;  // dynamic inputs
    bytes +=
        shape_numel(bind_batch(v.shape, batch)) * static_cast<std::int64_t>(dtype_size(v.dtype));
  }
  return bytes;
}

}  // namespace telar::backend
