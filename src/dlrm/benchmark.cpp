#include "dlrm/benchmark.hpp"

#include <algorithm>
#include <functional>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/statistics.hpp"

namespace telar::dlrm {

namespace {

std::vector<DlrmBatch> prepare(DataSource& data, const BenchmarkOptions& o) {
  require(o.repeats > 0, "--repeats must be positive, got {}", o.repeats);
  require(o.warmup >= 0, "--warmup must not be negative, got {}", o.warmup);
  std::vector<DlrmBatch> batches(static_cast<std::size_t>(
      std::max<std::int64_t>(1, std::min<std::int64_t>(o.distinct_batches, data.batches()))));
  for (std::size_t j = 0; j < batches.size(); ++j)
    data.batch(static_cast<std::int64_t>(j), batches[j]);
  return batches;
}

BenchmarkResult time_calls(const std::string& name, const std::vector<DlrmBatch>& batches,
                           const BenchmarkOptions& o,
                           const std::function<void(const DlrmBatch&)>& call) {
  std::vector<double> secs;
  for (int i = 0; i < o.warmup + o.repeats; ++i) {
    const DlrmBatch& b = batches[static_cast<std::size_t>(i) % batches.size()];
    Stopwatch sw;
    call(b);
    if (i >= o.warmup) secs.push_back(sw.seconds());
  }
  BenchmarkResult r;
  r.benchmark = name;
  r.seconds_median = percentile(secs, 0.5);
  r.seconds_min = percentile(secs, 0.0);
  r.seconds_p10 = percentile(secs, 0.1);
  r.seconds_p90 = percentile(secs, 0.9);
  r.samples_per_s = static_cast<double>(batches.front().size()) / r.seconds_median;
  r.samples_per_s_best = static_cast<double>(batches.front().size()) / r.seconds_min;
  return r;
}

}  // namespace

BenchmarkResult benchmark_inference(Executor& exe, DataSource& data, const BenchmarkOptions& o) {
  const auto batches = prepare(data, o);
  BenchmarkResult r =
      time_calls("inference", batches, o, [&](const DlrmBatch& b) { exe.forward(b, false); });
  double lookups = 0;
  for (const auto& b : batches) lookups += static_cast<double>(b.lookups());
  r.lookups_per_call = lookups / static_cast<double>(batches.size());
  return r;
}

BenchmarkResult benchmark_embedding_bag(const EmbeddingTable& table, DataSource& data,
                                        const BenchmarkOptions& o) {
  const auto batches = prepare(data, o);
  for (const auto& b : batches) check_bags(b.bags(0), table.rows(), "table 0");
  Tensor out({batches.front().size(), table.dim()});
  BenchmarkResult r = time_calls("embedding-bag", batches, o,
                                 [&](const DlrmBatch& b) { table.forward(b.bags(0), out.f32()); });
  double lookups = 0;
  for (const auto& b : batches) lookups += static_cast<double>(b.indices[0].numel());
  r.lookups_per_call = lookups / static_cast<double>(batches.size());
  const double bytes = r.lookups_per_call * static_cast<double>(table.dim()) * 4.0;
  r.effective_gb_per_s = bytes / r.seconds_median / 1e9;
  r.effective_gb_per_s_best = bytes / r.seconds_min / 1e9;
  return r;
}

}  // namespace telar::dlrm
