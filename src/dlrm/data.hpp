#pragma once
// DLRM's inputs, one mini-batch at a time: dense features, per table the bags in CSR form
// (indices and per-bag start offsets), and the click targets. Sources are deterministic: batch j
// is a function of (seed, j) whatever order batches are asked for, so a run repeats exactly.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "dlrm/config.hpp"
#include "dlrm/embedding_table.hpp"

namespace telar::dlrm {

struct DlrmBatch {
  Tensor dense;                 // [n, m] f32
  std::vector<Tensor> indices;  // per table [nnz_t] i64
  std::vector<Tensor> offsets;  // per table [n] i64
  Tensor target;                // [n, 1] f32
  std::int64_t size() const { return dense.defined() ? dense.dim(0) : 0; }
  std::int64_t lookups() const;  // indices over all tables
  CsrBags bags(std::int64_t t) const;
};

class DataSource {
 public:
  virtual ~DataSource() = default;
  virtual std::int64_t batches() const = 0;
  virtual std::int64_t samples() const = 0;
  virtual void batch(std::int64_t j, DlrmBatch& out) = 0;
  virtual std::string describe() const = 0;
  // Whether targets are click labels (0/1): accuracy and AUC are meaningful.
  virtual bool binary_targets() const = 0;
};

// How many indices each bag gets (dlrm_s_pytorch.py's --num-indices-per-lookup[-fixed]).
struct LookupOptions {
  std::int64_t per_lookup = 10;
  bool fixed = false;
};

// --data-size and --num-batches as the reference reads them: ceil(data_size / mini_batch)
// batches, the last possibly short; --num-batches N > 0 instead gives N full batches.
struct BatchPlan {
  std::int64_t samples = 0;
  std::int64_t batch_size = 1;
  std::int64_t batches() const { return (samples + batch_size - 1) / batch_size; }
  std::int64_t size_of(std::int64_t j) const {
    return std::min(batch_size, samples - j * batch_size);
  }
  static BatchPlan from_flags(std::int64_t data_size, std::int64_t num_batches,
                              std::int64_t mini_batch_size);
};

// --data-generation=random: the reference generator (dlrm_data_pytorch.py). Dense features
// U[0,1); per table and sample L = round(max(1, r * min(rows, per_lookup))) with r ~ U[0,1)
// (or L = per_lookup when fixed), indices unique(round(U[0,1)^L * (rows - 1))), sorted; targets
// U[0,1) (rounded with round_targets).
std::unique_ptr<DataSource> make_random_data(const DlrmConfig& config, BatchPlan plan,
                                             LookupOptions lookups, std::uint64_t seed,
                                             bool round_targets = false);

// --data-generation=synthetic: a click data set with a hidden rule, so that training can be
// seen to learn. Each table row has a hidden score in [-1, 1) and each dense feature a hidden
// sign; a sample's click probability is sigmoid(3 z - 1) with z mixing the signed dense
// features and the scores of the rows in its bags; the label is drawn from it. Rows are
// drawn with a power law (row = floor(rows * u^3)) so that popular rows recur. `stream`
// separates the training set (0) from the test set (1).
std::unique_ptr<DataSource> make_synthetic_data(const DlrmConfig& config, BatchPlan plan,
                                                LookupOptions lookups, std::uint64_t seed,
                                                std::uint64_t stream);

// The hidden rule's click probability for one sample (for tests and the docs).
double synthetic_click_probability(const DlrmConfig& config, std::uint64_t seed, const float* dense,
                                   const std::vector<std::vector<std::int64_t>>& bags);

}  // namespace telar::dlrm
