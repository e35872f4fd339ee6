#include "backend/measure.hpp"

#include <unistd.h>

#include <cstring>

#include "core/clock.hpp"
#include "core/threads.hpp"

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
    if (options.cold_caches) fill_caches_with_other_data();
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
