#include "dlrm/embedding_table.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/parallel.hpp"
#include "core/rng.hpp"

namespace telar::dlrm {

namespace fs = std::filesystem;
using backend::cpu::embedding_bag_sum;
using backend::cpu::sparse_sgd_update;

constexpr EnumNames<StorageKind, StorageKind::Procedural> kStorageNames{
    {"memory", "mmap", "procedural"}};

std::string_view storage_name(StorageKind kind) {
  return kStorageNames(kind);
}

namespace {

std::uint64_t table_key(std::uint64_t seed, std::int64_t table) {
  return mix64(seed ^ mix64(0x7AB1E5EEDULL + static_cast<std::uint64_t>(table)));
}

float table_bound(std::int64_t rows) {
  return std::sqrt(1.0f / static_cast<float>(rows));
}

// Column `col` of row `row`, for a table with key `key` and bound sqrt(1/rows). Columns are
// below 2^16 and rows below 2^31, so (row << 16 | col) is unique per entry.
inline float entry_value(std::uint64_t key, float bound, std::int64_t row, std::int64_t col) {
  const std::uint64_t h =
      mix64(key ^ ((static_cast<std::uint64_t>(row) << 16) | static_cast<std::uint64_t>(col)));
  const float u = static_cast<float>(h >> 40) * 0x1.0p-24f;  // [0, 1), exact
  return bound * (2.0f * u - 1.0f);
}

void fill_initial(float* data, std::int64_t rows, std::int64_t dim, std::uint64_t key) {
  const float bound = table_bound(rows);
  parallel_for(0, rows, rows * dim > 65536, [&](std::int64_t r) {
    float* row = data + r * dim;
    for (std::int64_t c = 0; c < dim; ++c) row[c] = entry_value(key, bound, r, c);
  });
}

// Rows held in an array: in memory or in a mapped file.
class ArrayTable : public EmbeddingTable {
 public:
  void forward(const CsrBags& bags, float* out) const override {
    embedding_bag_sum(data_, dim_, bags, out);
  }
  void apply_sgd(const SparseRowGrad& grad, float lr) override {
    sparse_sgd_update(data_, grad, lr);
  }
  void read_row(std::int64_t row, float* out) const override {
    std::memcpy(out, data_ + row * dim_, static_cast<std::size_t>(dim_) * sizeof(float));
  }
  std::int64_t held_bytes() const override { return rows_ * dim_ * 4; }

  TrainedRows trained_rows() const override {
    TrainedRows saved;
    saved.values = Tensor(Shape{rows_, dim_});
    std::memcpy(saved.values.f32(), data_, static_cast<std::size_t>(rows_ * dim_) * sizeof(float));
    return saved;
  }
  void restore_rows(const TrainedRows& saved, const std::string& source) override {
    if (saved.rows.defined() || saved.values.dtype() != DType::F32 ||
        saved.values.shape() != Shape{rows_, dim_})
      fail(
          "{}: embedding table {} was not saved as the {} x {} table of this model; resume "
          "with the run's own options",
          source, table_, rows_, dim_);
    std::memcpy(data_, saved.values.f32(), static_cast<std::size_t>(rows_ * dim_) * sizeof(float));
  }

 protected:
  using EmbeddingTable::EmbeddingTable;
  float* data_ = nullptr;
};

class MemoryTable final : public ArrayTable {
 public:
  MemoryTable(std::int64_t table, std::int64_t rows, std::int64_t dim, std::uint64_t seed)
      : ArrayTable(table, rows, dim, seed) {
    // Anonymous memory aligned to 2 MB and marked for transparent huge pages: random rows of a
    // large table then cost one TLB entry per 2 MB instead of per 4 KB.
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    const std::size_t bytes = static_cast<std::size_t>(rows * dim) * sizeof(float);
    mapped_ = (bytes + kHuge - 1) / kHuge * kHuge + kHuge;
    void* p = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      fail(
          "cannot allocate {} MB for embedding table {}; use --embedding-storage procedural or "
          "mmap",
          bytes >> 20, table);
    base_ = p;
    const auto at = (reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) / kHuge * kHuge;
    data_ = reinterpret_cast<float*>(at);
    ::madvise(data_, mapped_ - kHuge, MADV_HUGEPAGE);  // advice only: fine if refused
    fill_initial(data_, rows, dim, table_key(seed, table));
  }
  ~MemoryTable() override { ::munmap(base_, mapped_); }
  StorageKind kind() const override { return StorageKind::Memory; }

 private:
  void* base_ = nullptr;
  std::size_t mapped_ = 0;
};

class MappedTable final : public ArrayTable {
 public:
  MappedTable(std::int64_t table, std::int64_t rows, std::int64_t dim, std::uint64_t seed,
              const fs::path& dir)
      : ArrayTable(table, rows, dim, seed) {
    bytes_ = static_cast<std::size_t>(rows * dim) * sizeof(float);
    const fs::path where = dir.empty() ? fs::temp_directory_path() : dir;
    std::string name = (where / "telar-embedding-XXXXXX").string();
    const int fd = ::mkstemp(name.data());
    if (fd < 0)
      fail("cannot create an embedding file in '{}': {}; choose a writable --embedding-dir",
           where.string(), std::strerror(errno));
    ::unlink(name.c_str());  // nothing is left behind, whatever happens next
    const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes_));
    if (err != 0) {
      ::close(fd);
      fail(
          "cannot reserve {} MB for embedding table {} in '{}': {}; choose an --embedding-dir "
          "with more space or --embedding-storage procedural",
          bytes_ >> 20, table, where.string(), std::strerror(err));
    }
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED)
      fail("cannot map embedding table {} ({} MB): {}", table, bytes_ >> 20, std::strerror(errno));
    data_ = static_cast<float*>(p);
    fill_initial(data_, rows, dim, table_key(seed, table));
  }
  ~MappedTable() override { ::munmap(data_, bytes_); }
  StorageKind kind() const override { return StorageKind::Mmap; }

 private:
  std::size_t bytes_ = 0;
};

class ProceduralTable final : public EmbeddingTable {
 public:
  ProceduralTable(std::int64_t table, std::int64_t rows, std::int64_t dim, std::uint64_t seed)
      : EmbeddingTable(table, rows, dim, seed),
        key_(table_key(seed, table)),
        bound_(table_bound(rows)) {}
  StorageKind kind() const override { return StorageKind::Procedural; }

  void forward(const CsrBags& bags, float* out) const override {
    const std::int64_t dim = dim_;
    const bool overlay = !slot_.empty();
    parallel_for(0, bags.bags, bags.bags > 1 && bags.nnz * dim > 8192, [&](std::int64_t b) {
      float* o = out + b * dim;
      std::fill(o, o + dim, 0.0f);
      for (std::int64_t k = bags.begin(b); k < bags.end(b); ++k) {
        const std::int64_t r = bags.indices[k];
        if (overlay) {
          auto it = slot_.find(r);
          if (it != slot_.end()) {
            const float* row = overlay_.data() + it->second * dim;
#pragma omp simd
            for (std::int64_t c = 0; c < dim; ++c) o[c] += row[c];
            continue;
          }
        }
        for (std::int64_t c = 0; c < dim; ++c) o[c] += entry_value(key_, bound_, r, c);
      }
    });
  }

  void apply_sgd(const SparseRowGrad& grad, float lr) override {
    const std::int64_t dim = dim_;
    slots_of_.resize(static_cast<std::size_t>(grad.size()));
    for (std::int64_t u = 0; u < grad.size(); ++u) {  // new rows enter the overlay serially
      const std::int64_t r = grad.rows[u];
      auto [it, inserted] = slot_.try_emplace(r, static_cast<std::int64_t>(slot_.size()));
      if (inserted) {
        overlay_.resize(overlay_.size() + static_cast<std::size_t>(dim));
        float* row = overlay_.data() + it->second * dim;
        for (std::int64_t c = 0; c < dim; ++c) row[c] = entry_value(key_, bound_, r, c);
      }
      slots_of_[u] = it->second;
    }
    parallel_for(0, grad.size(), grad.size() * dim > 32768, [&](std::int64_t u) {
      float* row = overlay_.data() + slots_of_[u] * dim;
      const float* v = grad.values.data() + u * dim;
#pragma omp simd
      for (std::int64_t c = 0; c < dim; ++c) row[c] -= lr * v[c];
    });
  }

  void read_row(std::int64_t row, float* out) const override {
    auto it = slot_.find(row);
    if (it != slot_.end()) {
      std::memcpy(out, overlay_.data() + it->second * dim_, static_cast<std::size_t>(dim_) * 4);
      return;
    }
    for (std::int64_t c = 0; c < dim_; ++c) out[c] = entry_value(key_, bound_, row, c);
  }

  std::int64_t held_bytes() const override {
    return static_cast<std::int64_t>(overlay_.capacity() * sizeof(float) +
                                     slot_.size() * 3 * sizeof(std::int64_t));
  }

  TrainedRows trained_rows() const override {
    const auto k = static_cast<std::int64_t>(slot_.size());
    TrainedRows saved{Tensor(Shape{k}, DType::I64), Tensor(Shape{k, dim_})};
    for (const auto& [row, slot] : slot_) saved.rows.data<std::int64_t>()[slot] = row;
    std::copy(overlay_.begin(), overlay_.end(), saved.values.f32());
    return saved;
  }
  void restore_rows(const TrainedRows& saved, const std::string& source) override {
    const bool shaped = saved.rows.defined() && saved.rows.dtype() == DType::I64 &&
                        saved.rows.rank() == 1 && saved.values.dtype() == DType::F32 &&
                        saved.values.shape() == Shape{saved.rows.dim(0), dim_};
    require(shaped,
            "{}: embedding table {} was not saved as trained rows of width {}; resume with the "
            "run's own options",
            source, table_, dim_);
    slot_.clear();
    const std::int64_t k = saved.rows.dim(0);
    for (std::int64_t slot = 0; slot < k; ++slot) {
      const std::int64_t row = saved.rows.data<std::int64_t>()[slot];
      require(row >= 0 && row < rows_ && slot_.try_emplace(row, slot).second,
              "{}: embedding table {} has a saved row {} that is out of range or repeated", source,
              table_, row);
    }
    const float* v = saved.values.f32();
    overlay_.assign(v, v + k * dim_);
  }

 private:
  std::uint64_t key_;
  float bound_;
  std::unordered_map<std::int64_t, std::int64_t> slot_;  // row -> overlay row
  std::vector<float> overlay_;
  std::vector<std::int64_t> slots_of_;
};

}  // namespace

float initial_embedding_value(std::uint64_t seed, std::int64_t table, std::int64_t rows,
                              std::int64_t row, std::int64_t col) {
  return entry_value(table_key(seed, table), table_bound(rows), row, col);
}

StorageKind choose_storage(const DlrmConfig& config, const StorageOptions& options,
                           std::optional<std::int64_t> available) {
  const std::int64_t bytes = config.table_bytes();
  const bool fits_memory = !available || bytes <= *available;
  if (options.mode == "memory") {
    if (!fits_memory)
      fail(
          "--embedding-storage memory: the tables take {}, more than the {} this machine has "
          "available; use --embedding-storage mmap (paged from a file) or procedural",
          bytes_text(static_cast<double>(bytes)), bytes_text(static_cast<double>(*available)));
    return StorageKind::Memory;
  }
  if (options.mode == "mmap") return StorageKind::Mmap;
  if (options.mode == "procedural") return StorageKind::Procedural;
  if (options.mode != "auto")
    fail("--embedding-storage: '{}' is not a storage; use auto, memory, mmap or procedural",
         options.mode);
  return bytes <= options.budget_bytes && fits_memory ? StorageKind::Memory
                                                      : StorageKind::Procedural;
}

EmbeddingTables::EmbeddingTables(const DlrmConfig& config, StorageKind kind, std::uint64_t seed,
                                 const fs::path& mmap_dir)
    : kind_(kind) {
  for (std::int64_t t = 0; t < config.tables(); ++t) {
    const std::int64_t rows = config.table_rows[t], dim = config.embedding_dim;
    switch (kind) {
      case StorageKind::Memory:
        tables_.push_back(std::make_unique<MemoryTable>(t, rows, dim, seed));
        break;
      case StorageKind::Mmap:
        tables_.push_back(std::make_unique<MappedTable>(t, rows, dim, seed, mmap_dir));
        break;
      case StorageKind::Procedural:
        tables_.push_back(std::make_unique<ProceduralTable>(t, rows, dim, seed));
        break;
    }
  }
}

std::int64_t EmbeddingTables::held_bytes() const {
  std::int64_t n = 0;
  for (const auto& t : tables_) n += t->held_bytes();
  return n;
}

}  // namespace telar::dlrm
