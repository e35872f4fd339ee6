#pragma once
// DLRM's embedding tables, stored one of three ways:
//   memory      a heap array (rows x dim fp32);
//   mmap        a memory-mapped file (created, unlinked at once so nothing is left behind,
//               paged in and out by the kernel: tables larger than RAM);
//   procedural  no storage at all: a row's values are a deterministic hash of (seed, table, row,
//               column); rows that training changes are kept in a sparse overlay, so memory grows
//               with the rows actually trained, not with the table.
// All three start from the same values (DLRM's U(-sqrt(1/rows), sqrt(1/rows)), drawn by that
// hash), so a model gives the same outputs whichever storage holds it.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "backend/cpu/embedding_bag_kernels.hpp"
#include "core/memory.hpp"
#include "core/tensor.hpp"
#include "dlrm/config.hpp"

namespace telar::dlrm {

using backend::cpu::CsrBags;
using backend::cpu::SparseRowGrad;

enum class StorageKind { Memory, Mmap, Procedural };
std::string_view storage_name(StorageKind kind);

// The initial value of table `table`'s entry (row, col): DLRM's uniform initialisation.
float initial_embedding_value(std::uint64_t seed, std::int64_t table, std::int64_t rows,
                              std::int64_t row, std::int64_t col);

class EmbeddingTable {
 public:
  virtual ~EmbeddingTable() = default;
  std::int64_t rows() const { return rows_; }
  std::int64_t dim() const { return dim_; }
  std::int64_t index() const { return table_; }
  virtual StorageKind kind() const = 0;

  // out[b, :] = sum of the rows of bag b. `bags` must have been checked (check_bags).
  virtual void forward(const CsrBags& bags, float* out) const = 0;
  // The rows as one array (memory, mmap), for kernels that run several tables at once; null
  // for procedural tables.
  virtual const float* array() const { return nullptr; }
  // rows[i] -= lr * values[i] for the rows of a sparse gradient.
  virtual void apply_sgd(const SparseRowGrad& grad, float lr) = 0;
  virtual void read_row(std::int64_t row, float* out) const = 0;
  // Bytes of table data this process holds (memory: all; mmap: mapped; procedural: overlay).
  virtual std::int64_t held_bytes() const = 0;

  // What training made of the table, for a checkpoint: row numbers (i64 [k]) and their values
  // (f32 [k, dim]). Array tables (memory, mmap) give every row in order and leave `rows`
  // undefined; a procedural table gives the rows of its overlay.
  struct TrainedRows {
    Tensor rows;
    Tensor values;
  };
  virtual TrainedRows trained_rows() const = 0;
  // Puts trained_rows() of a table of the same shape and seed back into this freshly made one.
  // Throws telar::Error (naming `source`) for rows of another shape or out of range.
  virtual void restore_rows(const TrainedRows& saved, const std::string& source) = 0;

 protected:
  EmbeddingTable(std::int64_t table, std::int64_t rows, std::int64_t dim, std::uint64_t seed)
      : table_(table), rows_(rows), dim_(dim), seed_(seed) {}
  std::int64_t table_, rows_, dim_;
  std::uint64_t seed_;
};

struct StorageOptions {
  std::string mode = "auto";              // auto | memory | mmap | procedural
  std::int64_t budget_bytes = 2LL << 30;  // auto: memory up to this many bytes, else procedural
  std::filesystem::path dir;              // mmap: where the table files go (default: temp dir)
};

// The storage `options` select for `config` (auto: memory if all tables fit the budget and the
// `available` memory, else procedural). Throws telar::Error for an unknown mode, and for
// memory storage of tables larger than `available` (naming both sizes).
StorageKind choose_storage(const DlrmConfig& config, const StorageOptions& options,
                           std::optional<std::int64_t> available = available_memory_bytes());

class EmbeddingTables {
 public:
  EmbeddingTables(const DlrmConfig& config, StorageKind kind, std::uint64_t seed,
                  const std::filesystem::path& mmap_dir = {});
  StorageKind kind() const { return kind_; }
  std::int64_t size() const { return static_cast<std::int64_t>(tables_.size()); }
  EmbeddingTable& operator[](std::int64_t t) { return *tables_.at(static_cast<std::size_t>(t)); }
  const EmbeddingTable& operator[](std::int64_t t) const {
    return *tables_.at(static_cast<std::size_t>(t));
  }
  std::int64_t held_bytes() const;

 private:
  StorageKind kind_;
  std::vector<std::unique_ptr<EmbeddingTable>> tables_;
};

}  // namespace telar::dlrm
