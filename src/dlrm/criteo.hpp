#pragma once
// Criteo's click logs (the Kaggle Display Advertising Challenge and the Terabyte set share the
// format): one sample per line, tab separated: the label (0/1), 13 integer features and 26
// categorical features as hex strings; any field but the label may be empty.
//   dense      log(x + 1) (empty or negative -> 0), as DLRM's loader does;
//   category   hashed into its table: row = hash(table, value) mod rows (empty fields hash too).
// The text is read once, streamed line by line (never whole in memory), into a binary cache of
// fixed-size records (the "processed" file); later runs read the cache directly, a batch at a
// time. The cache remembers the text's size and time and the table sizes; a stale or foreign
// cache is rebuilt from the text, or refused if no text is given.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "dlrm/config.hpp"
#include "dlrm/data.hpp"

namespace telar::dlrm {

inline constexpr int kCriteoDense = 13;
inline constexpr int kCriteoSparse = 26;

struct CriteoRecord {
  float label = 0.0f;
  float dense[kCriteoDense] = {};
  std::int32_t sparse[kCriteoSparse] = {};  // rows, already hashed into the tables
};

// Parses one line (without its newline) for tables of `rows` (26 sizes). Returns false and
// sets *why for a malformed line.
bool parse_criteo_line(std::string_view line, const std::vector<std::int64_t>& rows,
                       CriteoRecord& out, std::string* why);

struct CriteoOptions {
  std::filesystem::path raw;        // --raw-data-file (text)
  std::filesystem::path processed;  // --processed-data-file (default: RAW.telar-cache)
  bool strict = false;              // malformed lines are errors (default: skipped, counted)
};

struct CriteoStats {
  std::int64_t records = 0;
  std::int64_t skipped = 0;  // malformed lines left out when the cache was built
  bool built = false;        // this run converted the text
  std::filesystem::path cache;
};

class CriteoCache {
 public:
  // Opens the cache, building it from the text first when it is missing, stale or made for
  // other table sizes; a cache it did not build is read through once and checked (labels,
  // indices in range). Throws telar::Error (one line) for unreadable or malformed input.
  static std::shared_ptr<CriteoCache> open(const DlrmConfig& config, const CriteoOptions& options);
  ~CriteoCache();
  CriteoCache(const CriteoCache&) = delete;
  CriteoCache& operator=(const CriteoCache&) = delete;

  const CriteoStats& stats() const { return stats_; }
  std::int64_t records() const { return stats_.records; }
  // Reads records [first, first + count) into a batch (one index per bag and table).
  void read(std::int64_t first, std::int64_t count, DlrmBatch& out) const;

 private:
  CriteoCache() = default;
  int fd_ = -1;
  std::vector<std::int64_t> rows_;
  CriteoStats stats_;
  mutable std::vector<CriteoRecord> buffer_;
};

// Records [first, first + count) of a cache as batches of `batch_size`.
std::unique_ptr<DataSource> make_criteo_data(std::shared_ptr<CriteoCache> cache, std::int64_t first,
                                             std::int64_t count, std::int64_t batch_size,
                                             std::string name);

}  // namespace telar::dlrm
