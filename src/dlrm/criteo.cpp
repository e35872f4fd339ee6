#include "dlrm/criteo.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <type_traits>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/log.hpp"
#include "core/progress.hpp"
#include "core/rng.hpp"

namespace telar::dlrm {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'T', 'L', 'R', 'C', 'R', 'T', 'O', '1'};
constexpr std::uint32_t kVersion = 1;
constexpr int kFields = 1 + kCriteoDense + kCriteoSparse;

struct CacheHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t dense;
  std::uint32_t sparse;
  std::uint32_t record_bytes;
  std::uint64_t records;
  std::uint64_t skipped;
  std::uint64_t source_size;
  std::int64_t source_mtime;
  std::uint64_t rows[kCriteoSparse];
};
static_assert(std::is_trivially_copyable_v<CacheHeader>);
static_assert(sizeof(CriteoRecord) == 160, "cache records are 160 bytes");

std::int32_t category_row(int table, bool empty, std::uint64_t value, std::int64_t rows) {
  const std::uint64_t salt = mix64(0xC0FFEEULL + static_cast<std::uint64_t>(table));
  const std::uint64_t h = empty ? mix64(salt ^ 0xE111E7ULL) : mix64(salt + mix64(value));
  return static_cast<std::int32_t>(h % static_cast<std::uint64_t>(rows));
}

struct Source {
  std::uint64_t size = 0;
  std::int64_t mtime = 0;
};

Source source_of(const fs::path& raw) {
  std::error_code ec;
  Source s;
  s.size = fs::file_size(raw, ec);
  if (ec) fail("cannot read --raw-data-file '{}': {}", raw.string(), ec.message());
  s.mtime = static_cast<std::int64_t>(fs::last_write_time(raw, ec).time_since_epoch().count());
  return s;
}

// Why the cache at `path` cannot be used as is ("" if it can).
std::string cache_problem(const fs::path& path, const std::vector<std::int64_t>& rows,
                          const Source* source, CacheHeader& h) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fmt::format("cannot be read ({})", std::strerror(errno));
  if (!in.read(reinterpret_cast<char*>(&h), sizeof h) ||
      std::memcmp(h.magic, kMagic, sizeof kMagic) != 0)
    return "is not a telar Criteo cache (bad header)";
  if (h.version != kVersion || h.dense != kCriteoDense || h.sparse != kCriteoSparse ||
      h.record_bytes != sizeof(CriteoRecord))
    return fmt::format("has an unknown layout (version {})", h.version);
  std::error_code ec;
  const std::uint64_t size = fs::file_size(path, ec);
  const std::uint64_t body = size - sizeof h;
  if (body % sizeof(CriteoRecord) != 0)
    return fmt::format(
        "ends in the middle of a record ({} bytes of records is not a whole "
        "number of {}-byte records); it is truncated",
        body, sizeof(CriteoRecord));
  if (body / sizeof(CriteoRecord) != h.records)
    return fmt::format("holds {} records but its header says {}; it is truncated",
                       body / sizeof(CriteoRecord), h.records);
  for (int t = 0; t < kCriteoSparse; ++t)
    if (h.rows[t] != static_cast<std::uint64_t>(rows[t]))
      return fmt::format("was made for other table sizes (table {} has {} rows there, {} here)", t,
                         h.rows[t], rows[t]);
  if (source && (source->size != h.source_size || source->mtime != h.source_mtime))
    return "is older than --raw-data-file";
  return "";
}

void build_cache(const fs::path& raw, const fs::path& path, const std::vector<std::int64_t>& rows,
                 bool strict, const Source& source, CacheHeader& h) {
  std::ifstream in(raw, std::ios::binary);
  if (!in) fail("cannot read --raw-data-file '{}': {}", raw.string(), std::strerror(errno));
  AtomicFile out(path);
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.dense = kCriteoDense;
  h.sparse = kCriteoSparse;
  h.record_bytes = sizeof(CriteoRecord);
  h.source_size = source.size;
  h.source_mtime = source.mtime;
  for (int t = 0; t < kCriteoSparse; ++t) h.rows[t] = static_cast<std::uint64_t>(rows[t]);
  out.write(&h, sizeof h);

  ProgressBar progress("converting " + raw.filename().string(),
                       static_cast<std::int64_t>(std::max<std::uint64_t>(source.size, 1)));
  std::vector<CriteoRecord> chunk;
  chunk.reserve(4096);
  std::string line, why, first_problem;
  std::int64_t line_no = 0, bytes = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const bool unterminated = in.eof();  // the file ended before this line's newline
    bytes += static_cast<std::int64_t>(line.size()) + 1;
    std::string_view text(line);
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    CriteoRecord r;
    if (!parse_criteo_line(text, rows, r, &why)) {
      if (unterminated)
        fail(
            "{}: the file ends in the middle of a record (line {}: {}); it is probably "
            "truncated",
            raw.string(), line_no, why);
      if (strict)
        fail("{}:{}: {} (--strict; without it malformed lines are skipped and counted)",
             raw.string(), line_no, why);
      if (h.skipped++ == 0) first_problem = fmt::format("line {}: {}", line_no, why);
      continue;
    }
    chunk.push_back(r);
    ++h.records;
    if (chunk.size() == chunk.capacity()) {
      out.write(chunk.data(), chunk.size() * sizeof(CriteoRecord));
      chunk.clear();
      progress.update(bytes);
    }
  }
  if (in.bad()) fail("cannot read --raw-data-file '{}': {}", raw.string(), std::strerror(errno));
  out.write(chunk.data(), chunk.size() * sizeof(CriteoRecord));
  if (h.records == 0)
    fail(
        "{}: no valid Criteo record in {} lines{}; each line needs a 0/1 label, 13 integers and "
        "26 hex categories, tab separated",
        raw.string(), line_no,
        first_problem.empty() ? "" : " (first problem: " + first_problem + ")");
  if (std::fseek(out.handle(), 0, SEEK_SET) != 0)
    fail("cannot write '{}': {}", path.string(), std::strerror(errno));
  out.write(&h, sizeof h);
  out.commit();
  progress.finish(fmt::format("{} records", h.records));
  if (h.skipped > 0)
    log::warn("{}: skipped {} malformed line(s) of {} (first: {}); --strict makes them errors",
              raw.string(), h.skipped, line_no, first_problem);
}

}  // namespace

bool parse_criteo_line(std::string_view line, const std::vector<std::int64_t>& rows,
                       CriteoRecord& out, std::string* why) {
  std::string_view fields[kFields];
  int n = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t tab = line.find('\t', start);
    if (n < kFields)
      fields[n] = line.substr(start, tab == std::string_view::npos ? tab : tab - start);
    ++n;
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  if (n != kFields) {
    *why = fmt::format(
        "expected {} tab-separated fields (label, {} integers, {} categories), "
        "got {}",
        kFields, kCriteoDense, kCriteoSparse, n);
    return false;
  }
  if (fields[0] == "0" || fields[0] == "1") {
    out.label = fields[0] == "1" ? 1.0f : 0.0f;
  } else {
    *why = fmt::format("the label is '{}', expected 0 or 1", fields[0]);
    return false;
  }
  for (int j = 0; j < kCriteoDense; ++j) {
    const std::string_view f = fields[1 + j];
    std::int64_t x = 0;
    if (!f.empty()) {
      auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), x);
      if (ec != std::errc() || p != f.data() + f.size()) {
        *why = fmt::format("integer feature {} is '{}', not an integer", j + 1, f);
        return false;
      }
    }
    out.dense[j] = std::log(static_cast<float>(std::max<std::int64_t>(x, 0)) + 1.0f);
  }
  for (int t = 0; t < kCriteoSparse; ++t) {
    const std::string_view f = fields[1 + kCriteoDense + t];
    std::uint64_t v = 0;
    if (!f.empty()) {
      auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), v, 16);
      if (f.size() > 16 || ec != std::errc() || p != f.data() + f.size()) {
        *why = fmt::format("category {} is '{}', not a hex string of at most 16 digits", t + 1, f);
        return false;
      }
    }
    out.sparse[t] = category_row(t, f.empty(), v, rows[t]);
  }
  return true;
}

std::shared_ptr<CriteoCache> CriteoCache::open(const DlrmConfig& config,
                                               const CriteoOptions& options) {
  if (options.raw.empty() && options.processed.empty())
    fail(
        "--data-generation=dataset needs --raw-data-file (Criteo text) or "
        "--processed-data-file (a cache telar made)");
  if (config.tables() != kCriteoSparse)
    fail(
        "Criteo data has {} categorical features, so --arch-embedding-size needs {} table "
        "sizes (or one size for all), got {}",
        kCriteoSparse, kCriteoSparse, config.tables());
  if (config.dense_features() != kCriteoDense)
    fail("Criteo data has {} integer features, so --arch-mlp-bot must start with {}, got {}",
         kCriteoDense, kCriteoDense, config.dense_features());
  const fs::path path = options.processed.empty() ? fs::path(options.raw.string() + ".telar-cache")
                                                  : options.processed;
  std::unique_ptr<Source> source;
  if (!options.raw.empty()) {
    if (!is_file(options.raw))
      fail("--raw-data-file '{}' does not exist or is not a file", options.raw.string());
    source = std::make_unique<Source>(source_of(options.raw));
  }
  std::shared_ptr<CriteoCache> cache(new CriteoCache());
  cache->rows_ = config.table_rows;
  cache->stats_.cache = path;
  CacheHeader h{};
  std::string problem =
      fs::exists(path) ? cache_problem(path, config.table_rows, source.get(), h) : "does not exist";
  if (!problem.empty()) {
    if (!source)
      fail("--processed-data-file '{}' {}; give --raw-data-file to (re)build it", path.string(),
           problem);
    if (fs::exists(path)) log::info("rebuilding {}: it {}", path.string(), problem);
    build_cache(options.raw, path, config.table_rows, options.strict, *source, h);
    cache->stats_.built = true;
  }
  cache->stats_.records = static_cast<std::int64_t>(h.records);
  cache->stats_.skipped = static_cast<std::int64_t>(h.skipped);
  cache->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (cache->fd_ < 0) fail("cannot read '{}': {}", path.string(), std::strerror(errno));
  // A cache this run did not write is checked through once (streamed), so that a corrupted or
  // foreign one stops the command before it starts, not in the middle of training.
  if (!cache->stats_.built) {
    DlrmBatch scratch;
    constexpr std::int64_t kChunk = 1 << 15;
    for (std::int64_t first = 0; first < cache->records(); first += kChunk)
      cache->read(first, std::min(kChunk, cache->records() - first), scratch);
  }
  return cache;
}

CriteoCache::~CriteoCache() {
  if (fd_ >= 0) ::close(fd_);
}

void CriteoCache::read(std::int64_t first, std::int64_t count, DlrmBatch& out) const {
  buffer_.resize(static_cast<std::size_t>(count));
  const std::size_t want = static_cast<std::size_t>(count) * sizeof(CriteoRecord);
  const off_t at = static_cast<off_t>(sizeof(CacheHeader) +
                                      static_cast<std::size_t>(first) * sizeof(CriteoRecord));
  std::size_t got = 0;
  while (got < want) {
    const ssize_t r = ::pread(fd_, reinterpret_cast<char*>(buffer_.data()) + got, want - got,
                              at + static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      fail("{}: cannot read records {}..{} ({}); the file was changed or truncated while in use",
           stats_.cache.string(), first, first + count,
           r < 0 ? std::strerror(errno) : "end of file");
    got += static_cast<std::size_t>(r);
  }
  if (!out.dense.defined() || out.size() != count) {
    out.dense = Tensor({count, kCriteoDense});
    out.target = Tensor({count, 1});
  }
  out.indices.resize(kCriteoSparse);
  out.offsets.resize(kCriteoSparse);
  for (int t = 0; t < kCriteoSparse; ++t) {
    if (!out.indices[t].defined() || out.indices[t].numel() != count)
      out.indices[t] = Tensor({count}, DType::I64);
    if (!out.offsets[t].defined() || out.offsets[t].numel() != count)
      out.offsets[t] = Tensor({count}, DType::I64);
  }
  float* dense = out.dense.f32();
  float* target = out.target.f32();
  for (std::int64_t i = 0; i < count; ++i) {
    const CriteoRecord& r = buffer_[static_cast<std::size_t>(i)];
    if (r.label != 0.0f && r.label != 1.0f)
      fail("{}: record {} has label {}; the cache is corrupted (delete it to rebuild)",
           stats_.cache.string(), first + i, r.label);
    target[i] = r.label;
    for (int j = 0; j < kCriteoDense; ++j)
      if (!std::isfinite(r.dense[j]))
        fail("{}: record {} has a dense feature {} of {}; the cache is corrupted (delete it to "
             "rebuild)",
             stats_.cache.string(), first + i, j + 1, r.dense[j]);
    std::memcpy(dense + i * kCriteoDense, r.dense, sizeof r.dense);
    for (int t = 0; t < kCriteoSparse; ++t) {
      const std::int64_t row = r.sparse[t];
      if (row < 0 || row >= rows_[t])
        fail(
            "{}: record {}, table {}: index {} is out of range for a table of {} rows; the "
            "cache is corrupted or foreign (delete it to rebuild)",
            stats_.cache.string(), first + i, t, row, rows_[t]);
      out.indices[t].data<std::int64_t>()[i] = row;
      out.offsets[t].data<std::int64_t>()[i] = i;
    }
  }
}

namespace {

class CriteoData final : public DataSource {
 public:
  CriteoData(std::shared_ptr<CriteoCache> cache, std::int64_t first, std::int64_t count,
             std::int64_t batch_size, std::string name)
      : cache_(std::move(cache)),
        first_(first),
        count_(count),
        batch_(batch_size),
        name_(std::move(name)) {}
  std::int64_t batches() const override { return (count_ + batch_ - 1) / batch_; }
  std::int64_t samples() const override { return count_; }
  void batch(std::int64_t j, DlrmBatch& out) override {
    const std::int64_t begin = j * batch_;
    cache_->read(first_ + begin, std::min(batch_, count_ - begin), out);
  }
  std::string describe() const override {
    return fmt::format("Criteo {} ({} samples, {} batches of {}, cache {})", name_, count_,
                       batches(), batch_, cache_->stats().cache.string());
  }
  bool binary_targets() const override { return true; }

 private:
  std::shared_ptr<CriteoCache> cache_;
  std::int64_t first_, count_, batch_;
  std::string name_;
};

}  // namespace

std::unique_ptr<DataSource> make_criteo_data(std::shared_ptr<CriteoCache> cache, std::int64_t first,
                                             std::int64_t count, std::int64_t batch_size,
                                             std::string name) {
  require(batch_size > 0, "--mini-batch-size must be positive, got {}", batch_size);
  return std::make_unique<CriteoData>(std::move(cache), first, count, batch_size, std::move(name));
}

}  // namespace telar::dlrm
