#pragma once
// The row-summing loop of embedding_bag_sum, compiled once per ISA (embedding_bag_isa_*.cpp
// include this file with different -m flags) and picked at run time. Rows are prefetched a
// fixed distance ahead in the index stream (across bag boundaries), which hides most of the
// DRAM latency of random rows (into L1: for tables that fit the caches that is much faster
// than a farther level, and no slower from DRAM); widths 16/32/64/128 get compile-time trip
// counts so the accumulators stay in registers.
#include <algorithm>
#include <cstdint>

#include "backend/cpu/embedding_bag_kernels.hpp"

namespace telar::backend::cpu::TELAR_EB_ISA {

namespace {

constexpr std::int64_t kPrefetchDistance = 32;

inline void prefetch_row(const float* row, std::int64_t bytes) {
  for (std::int64_t at = 0; at < bytes; at += 64)
    __builtin_prefetch(reinterpret_cast<const char*>(row) + at, 0, 3);
}

template <std::int64_t D>
void sum_fixed(const float* table, const CsrBags& bags, std::int64_t b0, std::int64_t b1,
               float* out) {
  const std::int64_t* idx = bags.indices;
  const std::int64_t nnz = bags.nnz;
  for (std::int64_t b = b0; b < b1; ++b) {
    float acc[D];
#pragma omp simd
    for (std::int64_t d = 0; d < D; ++d) acc[d] = 0.0f;
    const std::int64_t end = bags.end(b);
    for (std::int64_t k = bags.begin(b); k < end; ++k) {
      if (k + kPrefetchDistance < nnz) prefetch_row(table + idx[k + kPrefetchDistance] * D, D * 4);
      const float* row = table + idx[k] * D;
#pragma omp simd
      for (std::int64_t d = 0; d < D; ++d) acc[d] += row[d];
    }
    float* o = out + b * D;
#pragma omp simd
    for (std::int64_t d = 0; d < D; ++d) o[d] = acc[d];
  }
}

void sum_any(const float* table, std::int64_t dim, const CsrBags& bags, std::int64_t b0,
             std::int64_t b1, float* out) {
  const std::int64_t* idx = bags.indices;
  const std::int64_t nnz = bags.nnz;
  for (std::int64_t b = b0; b < b1; ++b) {
    float* o = out + b * dim;
    std::fill(o, o + dim, 0.0f);
    const std::int64_t end = bags.end(b);
    for (std::int64_t k = bags.begin(b); k < end; ++k) {
      if (k + kPrefetchDistance < nnz)
        prefetch_row(table + idx[k + kPrefetchDistance] * dim,
                     std::min<std::int64_t>(dim * 4, 512));
      const float* row = table + idx[k] * dim;
#pragma omp simd
      for (std::int64_t d = 0; d < dim; ++d) o[d] += row[d];
    }
  }
}

}  // namespace

void sum_bags(const float* table, std::int64_t dim, const CsrBags& bags, std::int64_t b0,
              std::int64_t b1, float* out) {
  switch (dim) {
    case 16:
      return sum_fixed<16>(table, bags, b0, b1, out);
    case 32:
      return sum_fixed<32>(table, bags, b0, b1, out);
    case 64:
      return sum_fixed<64>(table, bags, b0, b1, out);
    case 128:
      return sum_fixed<128>(table, bags, b0, b1, out);
    default:
      return sum_any(table, dim, bags, b0, b1, out);
  }
}

}  // namespace telar::backend::cpu::TELAR_EB_ISA
