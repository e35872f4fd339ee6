#pragma once
// Speed measurements for `telar dlrm --benchmark` (and bench/dlrm_compare.sh, which runs the
// PyTorch peer bench/peer/torch_dlrm.py the same way): a few batches are prepared first, then
// the timed calls cycle through them; the median and the fastest of the repeats are reported
// (on a loaded machine the fastest call is the better estimate of the work itself).
//   inference       the whole model's forward (eval mode), samples per second;
//   embedding-bag   table 0's EmbeddingBag alone, effective GB/s = rows read (indices x dim x 4
//                   bytes) per second.
#include <string>

#include "dlrm/data.hpp"
#include "dlrm/executor.hpp"

namespace telar::dlrm {

struct BenchmarkOptions {
  int warmup = 3;
  int repeats = 20;
  int distinct_batches = 4;
};

struct BenchmarkResult {
  std::string benchmark;
  double seconds_median = 0.0, seconds_min = 0.0, seconds_p10 = 0.0, seconds_p90 = 0.0;
  double samples_per_s = 0.0;       // at the median
  double samples_per_s_best = 0.0;  // at the fastest call
  double lookups_per_call = 0.0;    // indices per timed call (embedding-bag: table 0)
  double effective_gb_per_s = 0.0;  // embedding-bag only, at the median
  double effective_gb_per_s_best = 0.0;
};

BenchmarkResult benchmark_inference(Executor& exe, DataSource& data, const BenchmarkOptions& o);
BenchmarkResult benchmark_embedding_bag(const EmbeddingTable& table, DataSource& data,
                                        const BenchmarkOptions& o);

}  // namespace telar::dlrm
