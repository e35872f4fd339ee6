#include "dlrm/data.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace telar::dlrm {

std::int64_t DlrmBatch::lookups() const {
  std::int64_t n = 0;
  for (const auto& t : indices) n += t.numel();
  return n;
}

CsrBags DlrmBatch::bags(std::int64_t t) const {
  const Tensor& idx = indices.at(static_cast<std::size_t>(t));
  const Tensor& off = offsets.at(static_cast<std::size_t>(t));
  return {idx.data<std::int64_t>(), off.data<std::int64_t>(), off.numel(), idx.numel()};
}

BatchPlan BatchPlan::from_flags(std::int64_t data_size, std::int64_t num_batches,
                                std::int64_t mini_batch_size) {
  require(mini_batch_size > 0, "--mini-batch-size must be positive, got {}", mini_batch_size);
  require(num_batches >= 0, "--num-batches must be 0 (from --data-size) or positive, got {}",
          num_batches);
  BatchPlan p;
  p.batch_size = mini_batch_size;
  if (num_batches > 0) {
    p.samples = num_batches * mini_batch_size;
  } else {
    require(data_size > 0, "--data-size must be positive, got {}", data_size);
    p.samples = data_size;
  }
  return p;
}

namespace {

// One bag of the reference generator: L indices in [0, rows), unique and sorted.
void reference_bag(Rng& rng, std::int64_t rows, const LookupOptions& l, double skew,
                   std::vector<std::int64_t>& out) {
  std::int64_t size = l.per_lookup;
  if (!l.fixed) {
    const double r = rng.uniform();
    size = static_cast<std::int64_t>(
        std::nearbyint(std::max(1.0, r * static_cast<double>(std::min(rows, l.per_lookup)))));
  }
  out.clear();
  for (std::int64_t i = 0; i < size; ++i) {
    double u = rng.uniform();
    if (skew != 1.0) u = std::pow(u, skew);
    out.push_back(static_cast<std::int64_t>(std::nearbyint(u * static_cast<double>(rows - 1))));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

void shape_batch(const DlrmConfig& c, std::int64_t n, DlrmBatch& out) {
  if (out.size() != n || out.dense.dim(1) != c.dense_features()) {
    out.dense = Tensor({n, c.dense_features()});
    out.target = Tensor({n, 1});
  }
  out.indices.resize(static_cast<std::size_t>(c.tables()));
  out.offsets.resize(static_cast<std::size_t>(c.tables()));
  for (auto& o : out.offsets)
    if (!o.defined() || o.numel() != n) o = Tensor({n}, DType::I64);
}

// Fills table t's CSR tensors from bags (reusing the index tensor when its size fits).
void store_bags(const std::vector<std::vector<std::int64_t>>& bags, Tensor& indices,
                Tensor& offsets) {
  std::int64_t nnz = 0;
  auto* off = offsets.data<std::int64_t>();
  for (std::size_t b = 0; b < bags.size(); ++b) {
    off[b] = nnz;
    nnz += static_cast<std::int64_t>(bags[b].size());
  }
  if (!indices.defined() || indices.numel() != nnz) indices = Tensor({nnz}, DType::I64);
  auto* idx = indices.data<std::int64_t>();
  for (const auto& bag : bags) idx = std::copy(bag.begin(), bag.end(), idx);
}

class GeneratedData : public DataSource {
 public:
  GeneratedData(const DlrmConfig& c, BatchPlan plan, LookupOptions lookups, std::uint64_t seed)
      : config_(c), plan_(plan), lookups_(lookups), seed_(seed) {
    require(lookups.per_lookup > 0, "--num-indices-per-lookup must be positive, got {}",
            lookups.per_lookup);
  }
  std::int64_t batches() const override { return plan_.batches(); }
  std::int64_t samples() const override { return plan_.samples; }

 protected:
  DlrmConfig config_;
  BatchPlan plan_;
  LookupOptions lookups_;
  std::uint64_t seed_;
  std::vector<std::vector<std::int64_t>> bags_;
};

class RandomData final : public GeneratedData {
 public:
  RandomData(const DlrmConfig& c, BatchPlan plan, LookupOptions l, std::uint64_t seed, bool round)
      : GeneratedData(c, plan, l, seed), round_(round) {}

  void batch(std::int64_t j, DlrmBatch& out) override {
    const std::int64_t n = plan_.size_of(j);
    shape_batch(config_, n, out);
    Rng rng = Rng::derive(seed_, static_cast<std::uint64_t>(j));
    for (auto& v : out.dense.span<float>()) v = static_cast<float>(rng.uniform());
    bags_.resize(static_cast<std::size_t>(n));
    for (std::int64_t t = 0; t < config_.tables(); ++t) {
      for (auto& bag : bags_) reference_bag(rng, config_.table_rows[t], lookups_, 1.0, bag);
      store_bags(bags_, out.indices[t], out.offsets[t]);
    }
    for (auto& v : out.target.span<float>()) {
      v = static_cast<float>(rng.uniform());
      if (round_) v = std::nearbyint(v);
    }
  }
  std::string describe() const override {
    return fmt::format("random ({} samples, {} batches of {}, {} indices per lookup{})",
                       plan_.samples, plan_.batches(), plan_.batch_size, lookups_.per_lookup,
                       lookups_.fixed ? ", fixed" : "");
  }
  bool binary_targets() const override { return round_; }

 private:
  bool round_;
};

// The hidden rule's pieces: a row's score and a dense feature's sign.
double row_score(std::uint64_t seed, std::int64_t t, std::int64_t row) {
  const std::uint64_t h =
      mix64(mix64(seed ^ 0x5C0BE5ULL) ^
            mix64(static_cast<std::uint64_t>(t) << 32 ^ static_cast<std::uint64_t>(row)));
  return static_cast<double>(h >> 11) * 0x1.0p-52 - 1.0;  // [-1, 1)
}
double dense_sign(std::uint64_t seed, std::int64_t j) {
  return (mix64(seed ^ 0xDE45EULL ^ static_cast<std::uint64_t>(j)) & 1) ? 1.0 : -1.0;
}

class SyntheticData final : public GeneratedData {
 public:
  SyntheticData(const DlrmConfig& c, BatchPlan plan, LookupOptions l, std::uint64_t seed,
                std::uint64_t stream)
      : GeneratedData(c, plan, l, seed), stream_(stream) {}

  void batch(std::int64_t j, DlrmBatch& out) override {
    const std::int64_t n = plan_.size_of(j);
    shape_batch(config_, n, out);
    Rng rng = Rng::derive(seed_ ^ mix64(0x5717ULL + stream_), static_cast<std::uint64_t>(j));
    for (auto& v : out.dense.span<float>()) v = static_cast<float>(rng.uniform());
    const std::int64_t T = config_.tables();
    per_sample_.assign(static_cast<std::size_t>(n),
                       std::vector<std::vector<std::int64_t>>(static_cast<std::size_t>(T)));
    bags_.resize(static_cast<std::size_t>(n));
    for (std::int64_t t = 0; t < T; ++t) {
      for (std::int64_t b = 0; b < n; ++b) {
        reference_bag(rng, config_.table_rows[t], lookups_, 3.0, bags_[b]);
        per_sample_[b][t] = bags_[b];
      }
      store_bags(bags_, out.indices[t], out.offsets[t]);
    }
    const float* dense = out.dense.f32();
    float* target = out.target.f32();
    for (std::int64_t b = 0; b < n; ++b) {
      const double p = synthetic_click_probability(
          config_, seed_, dense + b * config_.dense_features(), per_sample_[b]);
      target[b] = rng.uniform() < p ? 1.0f : 0.0f;
    }
  }
  std::string describe() const override {
    return fmt::format("synthetic clicks ({} samples, {} batches of {}, {} indices per lookup{})",
                       plan_.samples, plan_.batches(), plan_.batch_size, lookups_.per_lookup,
                       lookups_.fixed ? ", fixed" : "");
  }
  bool binary_targets() const override { return true; }

 private:
  std::uint64_t stream_;
  std::vector<std::vector<std::vector<std::int64_t>>> per_sample_;
};

}  // namespace

double synthetic_click_probability(const DlrmConfig& c, std::uint64_t seed, const float* dense,
                                   const std::vector<std::vector<std::int64_t>>& bags) {
  // Dense part: signed, centred features, scaled to unit variance (Var U[0,1) = 1/12).
  const std::int64_t m = c.dense_features();
  double dense_part = 0.0;
  for (std::int64_t j = 0; j < m; ++j) dense_part += dense_sign(seed, j) * (dense[j] - 0.5);
  dense_part /= std::sqrt(static_cast<double>(m) / 12.0);
  // Table part: the mean score of each bag's rows (unit variance for one row: Var = 1/3).
  double table_part = 0.0;
  for (std::size_t t = 0; t < bags.size(); ++t) {
    if (bags[t].empty()) continue;
    double s = 0.0;
    for (std::int64_t r : bags[t]) s += row_score(seed, static_cast<std::int64_t>(t), r);
    table_part += s / static_cast<double>(bags[t].size()) * std::sqrt(3.0);
  }
  if (!bags.empty()) table_part /= std::sqrt(static_cast<double>(bags.size()));
  const double z = (dense_part + table_part) / std::sqrt(2.0);
  return 1.0 / (1.0 + std::exp(-(3.0 * z - 1.0)));
}

std::unique_ptr<DataSource> make_random_data(const DlrmConfig& config, BatchPlan plan,
                                             LookupOptions lookups, std::uint64_t seed,
                                             bool round_targets) {
  return std::make_unique<RandomData>(config, plan, lookups, seed, round_targets);
}

std::unique_ptr<DataSource> make_synthetic_data(const DlrmConfig& config, BatchPlan plan,
                                                LookupOptions lookups, std::uint64_t seed,
                                                std::uint64_t stream) {
  return std::make_unique<SyntheticData>(config, plan, lookups, seed, stream);
}

}  // namespace telar::dlrm
