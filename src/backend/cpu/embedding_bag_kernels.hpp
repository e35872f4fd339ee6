#pragma once
// Fast EmbeddingBag kernels over a dense row-major table (sum mode): the forward gathers and
// sums rows with prefetching, vectorised for the machine's ISA (AVX-512, AVX2 or portable,
// chosen at run time), OpenMP over bags; the backward builds a sparse gradient (the rows used,
// each with the sum of its bags' output gradients), so a training step touches only those
// rows. Results equal the reference kernels in ops/ bit for bit (same summation order).
#include <cstdint>
#include <string_view>
#include <vector>

namespace telar::backend::cpu {

// Bags in CSR form: bag b is indices[offsets[b] .. offsets[b+1]) (the last ends at nnz).
struct CsrBags {
  const std::int64_t* indices = nullptr;
  const std::int64_t* offsets = nullptr;
  std::int64_t bags = 0;
  std::int64_t nnz = 0;
  std::int64_t begin(std::int64_t b) const { return offsets[b]; }
  std::int64_t end(std::int64_t b) const { return b + 1 < bags ? offsets[b + 1] : nnz; }
};

// Checks offsets (start at 0, non-decreasing, within nnz) and indices (in [0, rows)); throws
// telar::Error naming `what` (e.g. "table 3") and the first offending position.
void check_bags(const CsrBags& bags, std::int64_t rows, std::string_view what);

// out[b, :] = sum of table[indices[k], :] over bag b (zeros for an empty bag). `parallel`:
// split bags across the compute threads (when the work is large enough to pay for it).
void embedding_bag_sum(const float* table, std::int64_t dim, const CsrBags& bags, float* out,
                       bool parallel = true);

// Several tables at once (e.g. all of DLRM's): one parallel region over the blocks of bags of
// every job, dynamically scheduled, instead of one region per table.
struct BagSumJob {
  const float* table = nullptr;
  std::int64_t dim = 0;
  CsrBags bags;
  float* out = nullptr;
};
void embedding_bag_sum_many(const std::vector<BagSumJob>& jobs);

// The name of the vectorised variant in use ("avx512", "avx2" or "portable").
std::string_view embedding_bag_isa();

// A sparse gradient of a table: the distinct rows used (ascending) and, for each, the sum of
// the output gradients of the bags that used it (in index order). Buffers are reused.
struct SparseRowGrad {
  std::int64_t dim = 0;
  std::vector<std::int64_t> rows;
  std::vector<float> values;  // [rows.size(), dim]
  // scratch
  std::vector<std::int64_t> bag_of;
  std::vector<std::int64_t> order;
  std::vector<std::int64_t> segment;
  std::vector<std::int64_t> count;
  std::int64_t size() const { return static_cast<std::int64_t>(rows.size()); }
};

// Gradient of embedding_bag_sum with respect to the table, from dy [bags, dim].
void embedding_bag_sparse_backward(const CsrBags& bags, const float* dy, std::int64_t dim,
                                   SparseRowGrad& grad);

// table[rows[i], :] -= lr * values[i, :] (SGD on the rows used).
void sparse_sgd_update(float* table, const SparseRowGrad& grad, float lr);

// dense[rows[i], :] = values[i, :] after zeroing every row (a dense gradient from a sparse one).
void sparse_to_dense(const SparseRowGrad& grad, std::int64_t rows, float* dense);

}  // namespace telar::backend::cpu
