#include "backend/cpu/embedding_bag_kernels.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "core/parallel.hpp"

namespace telar::backend::cpu {

namespace avx512 {
void sum_bags(const float*, std::int64_t, const CsrBags&, std::int64_t, std::int64_t, float*);
}
namespace avx2 {
void sum_bags(const float*, std::int64_t, const CsrBags&, std::int64_t, std::int64_t, float*);
}
namespace portable {
void sum_bags(const float*, std::int64_t, const CsrBags&, std::int64_t, std::int64_t, float*);
}

namespace {

using SumBags = void (*)(const float*, std::int64_t, const CsrBags&, std::int64_t, std::int64_t,
                         float*);

struct Variant {
  SumBags sum;
  std::string_view name;
};

Variant pick_variant() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl"))
    return {avx512::sum_bags, "avx512"};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {avx2::sum_bags, "avx2"};
#endif
  return {portable::sum_bags, "portable"};
}

const Variant& variant() {
  static const Variant v = pick_variant();
  return v;
}

constexpr std::int64_t kBagsPerBlock = 16;

}  // namespace

std::string_view embedding_bag_isa() {
  return variant().name;
}

void check_bags(const CsrBags& bags, std::int64_t rows, std::string_view what) {
  if (bags.bags > 0 && bags.offsets[0] != 0)
    fail("{}: offsets[0] is {}, but the first bag must start at index 0", what, bags.offsets[0]);
  for (std::int64_t b = 0; b + 1 < bags.bags; ++b)
    if (bags.offsets[b + 1] < bags.offsets[b])
      fail("{}: offsets must be non-decreasing, but bag {} starts at {} and bag {} at {}", what, b,
           bags.offsets[b], b + 1, bags.offsets[b + 1]);
  if (bags.bags > 0 && bags.offsets[bags.bags - 1] > bags.nnz)
    fail("{}: the last bag ({}) starts at offset {}, past the end of the {} indices", what,
         bags.bags - 1, bags.offsets[bags.bags - 1], bags.nnz);
  // One pass without branches on the common path; the position is found only on failure.
  std::int64_t bad = 0;
  for (std::int64_t k = 0; k < bags.nnz; ++k)
    bad |= static_cast<std::int64_t>(static_cast<std::uint64_t>(bags.indices[k]) >=
                                     static_cast<std::uint64_t>(rows));
  if (!bad) return;
  for (std::int64_t b = 0; b < bags.bags; ++b)
    for (std::int64_t k = bags.begin(b); k < bags.end(b); ++k)
      if (bags.indices[k] < 0 || bags.indices[k] >= rows)
        fail(
            "{}: index {} (position {}, bag {}) is out of range for a table of {} rows; indices "
            "must be in [0, {})",
            what, bags.indices[k], k, b, rows, rows);
}

void embedding_bag_sum(const float* table, std::int64_t dim, const CsrBags& bags, float* out,
                       bool parallel) {
  const SumBags sum = variant().sum;
  const std::int64_t blocks = (bags.bags + kBagsPerBlock - 1) / kBagsPerBlock;
  const bool split = parallel && blocks > 1 && bags.nnz * dim > 32768;
  // Dynamic scheduling: bags differ in length, and on a shared machine a descheduled thread's
  // blocks are taken over by the others instead of holding up the whole call.
  parallel_for_dynamic(0, blocks, split, 1, [&](std::int64_t blk) {
    const std::int64_t b0 = blk * kBagsPerBlock;
    sum(table, dim, bags, b0, std::min(bags.bags, b0 + kBagsPerBlock), out);
  });
}

void embedding_bag_sum_many(const std::vector<BagSumJob>& jobs) {
  if (jobs.size() == 1)
    return embedding_bag_sum(jobs[0].table, jobs[0].dim, jobs[0].bags, jobs[0].out);
  const SumBags sum = variant().sum;
  // Blocks numbered across jobs: job j owns [first[j], first[j + 1]).
  std::int64_t fixed[65];
  std::vector<std::int64_t> grown;  // only for more than 64 tables
  std::int64_t* starts = fixed;
  if (jobs.size() >= 65) {
    grown.resize(jobs.size() + 1);
    starts = grown.data();
  }
  std::int64_t work = 0;
  starts[0] = 0;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    starts[j + 1] = starts[j] + (jobs[j].bags.bags + kBagsPerBlock - 1) / kBagsPerBlock;
    work += jobs[j].bags.nnz * jobs[j].dim;
  }
  const std::int64_t blocks = starts[jobs.size()];
  parallel_for_dynamic(0, blocks, blocks > 1 && work > 32768, 1, [&](std::int64_t blk) {
    const std::size_t j = static_cast<std::size_t>(
        std::upper_bound(starts, starts + jobs.size() + 1, blk) - starts - 1);
    const BagSumJob& job = jobs[j];
    const std::int64_t b0 = (blk - starts[j]) * kBagsPerBlock;
    sum(job.table, job.dim, job.bags, b0, std::min(job.bags.bags, b0 + kBagsPerBlock), job.out);
  });
}

void embedding_bag_sparse_backward(const CsrBags& bags, const float* dy, std::int64_t dim,
                                   SparseRowGrad& g) {
  const std::int64_t nnz = bags.nnz;
  g.dim = dim;
  g.bag_of.resize(static_cast<std::size_t>(nnz));
  for (std::int64_t b = 0; b < bags.bags; ++b)
    std::fill(g.bag_of.begin() + bags.begin(b), g.bag_of.begin() + bags.end(b), b);

  // Positions ordered by row, ties in position order: a stable LSD radix sort on the row
  // (11-bit digits, as many passes as the largest row needs).
  g.order.resize(static_cast<std::size_t>(nnz));
  g.segment.resize(static_cast<std::size_t>(nnz));
  std::int64_t max_row = 0;
  for (std::int64_t k = 0; k < nnz; ++k) {
    g.order[k] = k;
    max_row = std::max(max_row, bags.indices[k]);
  }
  constexpr int kBits = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  std::vector<std::int64_t>& count = g.count;
  count.resize(kBuckets);
  std::int64_t* src = g.order.data();
  std::int64_t* dst = g.segment.data();
  for (int shift = 0; (max_row >> shift) > 0; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (std::int64_t j = 0; j < nnz; ++j)
      ++count[(bags.indices[src[j]] >> shift) & (kBuckets - 1)];
    std::int64_t at = 0;
    for (auto& c : count) {
      const std::int64_t n = c;
      c = at;
      at += n;
    }
    for (std::int64_t j = 0; j < nnz; ++j)
      dst[count[(bags.indices[src[j]] >> shift) & (kBuckets - 1)]++] = src[j];
    std::swap(src, dst);
  }
  if (src != g.order.data()) std::memcpy(g.order.data(), src, static_cast<std::size_t>(nnz) * 8);

  // Segments of equal rows: segment[u] is the first position (in order) of distinct row u.
  g.rows.clear();
  g.segment.clear();
  for (std::int64_t j = 0; j < nnz; ++j) {
    const std::int64_t r = bags.indices[g.order[j]];
    if (g.rows.empty() || g.rows.back() != r) {
      g.rows.push_back(r);
      g.segment.push_back(j);
    }
  }
  const std::int64_t unique = g.size();
  g.segment.push_back(nnz);
  g.values.resize(static_cast<std::size_t>(unique * dim));
  float* values = g.values.data();
  parallel_for(0, unique, unique * dim > 32768, [&](std::int64_t u) {
    float* v = values + u * dim;
    std::fill(v, v + dim, 0.0f);
    for (std::int64_t j = g.segment[u]; j < g.segment[u + 1]; ++j) {
      const float* src_row = dy + g.bag_of[g.order[j]] * dim;
#pragma omp simd
      for (std::int64_t d = 0; d < dim; ++d) v[d] += src_row[d];
    }
  });
}

void sparse_sgd_update(float* table, const SparseRowGrad& g, float lr) {
  const std::int64_t dim = g.dim, n = g.size();
  const float* values = g.values.data();
  const std::int64_t line_bytes = std::min<std::int64_t>(dim * 4, 512);
  // Rows are scattered over the table: prefetch them (for writing) a few rows ahead.
  constexpr std::int64_t kAhead = 16, kBlock = 256;
  parallel_for_dynamic(0, (n + kBlock - 1) / kBlock, n * dim > 32768, 1, [&](std::int64_t blk) {
    const std::int64_t end = std::min(n, (blk + 1) * kBlock);
    for (std::int64_t u = blk * kBlock; u < end; ++u) {
      if (u + kAhead < end) {
        const char* ahead = reinterpret_cast<const char*>(table + g.rows[u + kAhead] * dim);
        for (std::int64_t at = 0; at < line_bytes; at += 64) __builtin_prefetch(ahead + at, 1, 1);
      }
      float* row = table + g.rows[u] * dim;
      const float* v = values + u * dim;
#pragma omp simd
      for (std::int64_t d = 0; d < dim; ++d) row[d] -= lr * v[d];
    }
  });
}

void sparse_to_dense(const SparseRowGrad& g, std::int64_t rows, float* dense) {
  const std::int64_t dim = g.dim;
  parallel_for(0, rows, rows * dim > (1 << 16),
               [&](std::int64_t r) { std::fill(dense + r * dim, dense + (r + 1) * dim, 0.0f); });
  for (std::int64_t u = 0; u < g.size(); ++u)
    std::memcpy(dense + g.rows[u] * dim, g.values.data() + u * dim,
                static_cast<std::size_t>(dim) * sizeof(float));
}

}  // namespace telar::backend::cpu
