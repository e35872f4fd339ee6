#include "train/checkpoint.hpp"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <vector>

#include "core/error.hpp"
#include "core/files.hpp"
#include "train/model_fingerprint.hpp"

namespace telar::train {

namespace fs = std::filesystem;

// Tensor elements are written as they lie in memory; the format is little-endian.
static_assert(std::endian::native == std::endian::little,
              "the checkpoint writer assumes a little-endian host");

namespace {

constexpr std::size_t kHeaderBytes = 24;  // magic, version, reserved, payload size
constexpr std::size_t kTrailerBytes = 4;  // CRC-32
constexpr std::uint32_t kMaxRank = 16;

// ---- names of the sections and dtype codes: part of the format, never reorder ----
constexpr std::string_view kModelSection = "model";
constexpr std::string_view kParametersSection = "parameters";
constexpr std::string_view kBuffersSection = "buffers";
constexpr std::string_view kOptimizerSection = "optimizer";
constexpr std::string_view kTrainerSection = "trainer";
constexpr std::string_view kExtraSection = "extra";  // optional

std::uint8_t dtype_code(DType t) {
  switch (t) {
    case DType::F32:
      return 0;
    case DType::F64:
      return 1;
    case DType::I32:
      return 2;
    case DType::I64:
      return 3;
    case DType::U8:
      return 4;
  }
  return 255;
}

bool dtype_from_code(std::uint8_t code, DType& out) {
  constexpr DType kByCode[] = {DType::F32, DType::F64, DType::I32, DType::I64, DType::U8};
  if (code >= std::size(kByCode)) return false;
  out = kByCode[code];
  return true;
}

std::uint32_t crc32_update(std::uint32_t crc, const void* data, std::size_t n) {
  const auto* p = static_cast<const Bytef*>(data);
  uLong value = crc;
  while (n > 0) {
    const auto chunk = static_cast<uInt>(std::min<std::size_t>(n, 1u << 30));
    value = ::crc32(value, p, chunk);
    p += chunk;
    n -= chunk;
  }
  return static_cast<std::uint32_t>(value);
}

// ---------------------------------------------------------------- writing

// The payload is emitted twice: once into a CountingSink to learn section sizes (which come
// before their bodies) and once into the file. Counting touches no tensor data, so the file
// is streamed without building the payload in memory.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void put(const void* data, std::size_t n) = 0;

  void u8(std::uint8_t v) { put(&v, 1); }
  void u32(std::uint32_t v) { put(&v, 4); }
  void u64(std::uint64_t v) { put(&v, 8); }
  void i64(std::int64_t v) { put(&v, 8); }
  void f64(double v) { put(&v, 8); }
  void text(std::string_view s) {
    u32(static_cast<std::uint32_t>(s.size()));
    put(s.data(), s.size());
  }
  void tensors(const NamedTensors& list) {
    u32(static_cast<std::uint32_t>(list.size()));
    for (const NamedTensor& t : list) {
      text(t.name);
      u8(dtype_code(t.tensor.dtype()));
      u32(static_cast<std::uint32_t>(t.tensor.rank()));
      for (std::int64_t d : t.tensor.shape()) i64(d);
      put(t.tensor.raw(), t.tensor.nbytes());
    }
  }
};

class CountingSink final : public Sink {
 public:
  void put(const void*, std::size_t n) override { bytes += n; }
  std::uint64_t bytes = 0;
};

class FileSink final : public Sink {
 public:
  explicit FileSink(AtomicFile& file) : file_(file) {}
  void put(const void* data, std::size_t n) override {
    if (n == 0) return;
    file_.write(data, n);
    crc = crc32_update(crc, data, n);
  }
  std::uint32_t crc = 0;

 private:
  AtomicFile& file_;
};

struct SectionWriter {
  std::string_view name;
  std::function<void(Sink&)> body;
};

void emit_payload(Sink& sink, const std::vector<SectionWriter>& sections) {
  sink.u32(static_cast<std::uint32_t>(sections.size()));
  for (const SectionWriter& section : sections) {
    sink.text(section.name);
    CountingSink size;
    section.body(size);
    sink.u64(size.bytes);
    section.body(sink);
  }
}

void check_name_length(const std::string& name) {
  require(name.size() < (std::size_t{1} << 20), "internal: checkpoint name of {} bytes",
          name.size());
}

// ---------------------------------------------------------------- reading

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Reads the payload, refusing to go past the end of the current section, so that a damaged
// length can never cause a huge allocation or a read beyond the data.
class PayloadReader {
 public:
  PayloadReader(std::FILE* file, const fs::path& path, std::uint64_t limit)
      : file_(file), path_(path), left_(limit) {}

  [[noreturn]] void damaged(std::string_view what) const {
    fail(
        "checkpoint '{}' is damaged ({}) although its checksum matches; it was not written by "
        "this telar, use another checkpoint",
        path_.string(), what);
  }
  void get(void* out, std::size_t n) {
    if (n > left_) damaged("a field runs past the end of its section");
    if (n && std::fread(out, 1, n, file_) != n)
      fail("cannot read checkpoint '{}': {}", path_.string(), std::strerror(errno));
    left_ -= n;
  }
  void skip(std::uint64_t n) {
    if (n > left_) damaged("a section runs past the end of the payload");
    if (std::fseek(file_, static_cast<long>(n), SEEK_CUR) != 0)
      fail("cannot read checkpoint '{}': {}", path_.string(), std::strerror(errno));
    left_ -= n;
  }
  std::uint8_t u8() {
    std::uint8_t v;
    get(&v, 1);
    return v;
  }
  std::uint32_t u32() {
    std::uint32_t v;
    get(&v, 4);
    return v;
  }
  std::uint64_t u64() {
    std::uint64_t v;
    get(&v, 8);
    return v;
  }
  std::int64_t i64() {
    std::int64_t v;
    get(&v, 8);
    return v;
  }
  double f64() {
    double v;
    get(&v, 8);
    return v;
  }
  std::string text() {
    const std::uint32_t n = u32();
    if (n > left_) damaged("a string runs past the end of its section");
    std::string s(n, '\0');
    get(s.data(), n);
    return s;
  }
  NamedTensors tensors() {
    const std::uint32_t count = u32();
    NamedTensors list;
    for (std::uint32_t i = 0; i < count; ++i) {
      NamedTensor t;
      t.name = text();
      DType dtype = DType::F32;
      if (!dtype_from_code(u8(), dtype))
        damaged(fmt::format("tensor '{}' has an unknown dtype", t.name));
      const std::uint32_t rank = u32();
      if (rank > kMaxRank) damaged(fmt::format("tensor '{}' has rank {}", t.name, rank));
      Shape shape(rank);
      std::uint64_t bytes = dtype_size(dtype);
      for (auto& d : shape) {
        d = i64();
        if (d < 0 || static_cast<std::uint64_t>(d) > left_)
          damaged(fmt::format("tensor '{}' has a dimension of {}", t.name, d));
        bytes *= static_cast<std::uint64_t>(d);
        if (bytes > left_) damaged(fmt::format("tensor '{}' is larger than its section", t.name));
      }
      t.tensor = Tensor(shape, dtype);
      get(t.tensor.raw(), t.tensor.nbytes());
      list.push_back(std::move(t));
    }
    return list;
  }

  std::uint64_t left() const { return left_; }
  void set_left(std::uint64_t n) { left_ = n; }

 private:
  std::FILE* file_;
  const fs::path& path_;
  std::uint64_t left_;
};

std::string describe_model(std::string_view name, std::int64_t parameters,
                           std::uint64_t fingerprint) {
  return fmt::format("model {} ({} parameters, fingerprint {})", name, parameters,
                     fingerprint_str(fingerprint));
}

}  // namespace

void write_checkpoint(const fs::path& path, const Checkpoint& c) {
  check_name_length(c.model_name);
  std::vector<SectionWriter> sections = {
      {kModelSection,
       [&](Sink& s) {
         s.text(c.model_name);
         s.u64(c.model_fingerprint);
         s.i64(c.parameter_count);
       }},
      {kParametersSection, [&](Sink& s) { s.tensors(c.parameters); }},
      {kBuffersSection, [&](Sink& s) { s.tensors(c.buffers); }},
      {kOptimizerSection,
       [&](Sink& s) {
         s.text(c.optimizer_name);
         s.text(c.optimizer_description);
         s.tensors(c.optimizer_state);
       }},
      {kTrainerSection,
       [&](Sink& s) {
         const TrainerState& t = c.trainer;
         s.i64(t.epoch);
         s.i64(t.step_in_epoch);
         s.i64(t.global_step);
         for (std::uint64_t word : t.rng_state) s.u64(word);
         s.f64(t.best_metric);
         s.text(t.best_metric_name);
         s.text(t.config_json);
         s.text(t.progress_json);
       }},
  };
  if (!c.extra.empty()) sections.push_back({kExtraSection, [&](Sink& s) { s.tensors(c.extra); }});
  CountingSink payload_size;
  emit_payload(payload_size, sections);

  AtomicFile file(path);
  FileSink header(file);  // its CRC is unused: the checksum covers the payload only
  header.put(kCheckpointMagic, sizeof kCheckpointMagic);
  header.u32(kCheckpointFormatVersion);
  header.u32(0);
  header.u64(payload_size.bytes);
  FileSink payload(file);
  emit_payload(payload, sections);
  const std::uint32_t crc = payload.crc;
  file.write(&crc, sizeof crc);
  file.commit();
}

Checkpoint read_checkpoint(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    fail("checkpoint '{}' does not exist; give a checkpoint file written by telar train",
         path.string());
  if (fs::is_directory(path, ec))
    fail("checkpoint '{}' is a directory; give the checkpoint file inside it ({})", path.string(),
         (path / kCheckpointFileName).string());
  const std::uint64_t file_size = fs::file_size(path, ec);
  if (ec) fail("cannot read checkpoint '{}': {}", path.string(), ec.message());
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file)
    fail("cannot open checkpoint '{}': {}; check its permissions", path.string(),
         std::strerror(errno));
  std::setvbuf(file.get(), nullptr, _IOFBF, 1 << 20);

  unsigned char header[kHeaderBytes] = {};
  const std::size_t header_read = std::fread(header, 1, kHeaderBytes, file.get());
  if (std::memcmp(header, kCheckpointMagic, std::min<std::size_t>(header_read, 8)) != 0)
    fail(
        "'{}' is not a telar checkpoint (it does not start with TELARCKP); give a checkpoint "
        "file written by telar train",
        path.string());
  if (header_read < kHeaderBytes)
    fail(
        "checkpoint '{}' is truncated: expected at least {} bytes, found {}; use an earlier "
        "checkpoint or start a new run",
        path.string(), kHeaderBytes + kTrailerBytes, file_size);
  std::uint32_t version = 0;
  std::uint64_t payload_bytes = 0;
  std::memcpy(&version, header + 8, 4);
  std::memcpy(&payload_bytes, header + 16, 8);
  if (version == 0 || version > kCheckpointFormatVersion)
    fail(
        "checkpoint '{}' has format version {}, but this telar reads version {}; load it with the "
        "telar that wrote it",
        path.string(), version, kCheckpointFormatVersion);
  // A damaged size field could make the sum below wrap around.
  if (payload_bytes > std::numeric_limits<std::uint64_t>::max() - kHeaderBytes - kTrailerBytes)
    fail(
        "checkpoint '{}' is truncated: its header announces {} payload bytes, the file holds {} "
        "bytes; use an earlier checkpoint or start a new run",
        path.string(), payload_bytes, file_size);
  const std::uint64_t expected_size = kHeaderBytes + payload_bytes + kTrailerBytes;
  if (file_size < expected_size)
    fail(
        "checkpoint '{}' is truncated: expected {} bytes, found {}; use an earlier checkpoint or "
        "start a new run",
        path.string(), expected_size, file_size);
  if (file_size > expected_size)
    fail(
        "checkpoint '{}' is corrupted: {} bytes follow its end; use an earlier checkpoint or start "
        "a new run",
        path.string(), file_size - expected_size);

  // The checksum is verified over the whole payload before any of it is interpreted.
  std::uint32_t computed_crc = 0;
  {
    std::vector<unsigned char> chunk(1 << 20);
    std::uint64_t left = payload_bytes;
    while (left > 0) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk.size()));
      if (std::fread(chunk.data(), 1, n, file.get()) != n)
        fail("cannot read checkpoint '{}': {}", path.string(), std::strerror(errno));
      computed_crc = crc32_update(computed_crc, chunk.data(), n);
      left -= n;
    }
  }
  std::uint32_t stored_crc = 0;
  if (std::fread(&stored_crc, 1, 4, file.get()) != 4)
    fail("cannot read checkpoint '{}': {}", path.string(), std::strerror(errno));
  if (stored_crc != computed_crc)
    fail(
        "checkpoint '{}' is corrupted: checksum mismatch (stored 0x{:08x}, computed 0x{:08x}); "
        "use an earlier checkpoint or start a new run",
        path.string(), stored_crc, computed_crc);

  if (std::fseek(file.get(), static_cast<long>(kHeaderBytes), SEEK_SET) != 0)
    fail("cannot read checkpoint '{}': {}", path.string(), std::strerror(errno));
  PayloadReader in(file.get(), path, payload_bytes);
  Checkpoint c;
  std::set<std::string> seen;
  const std::uint32_t section_count = in.u32();
  for (std::uint32_t i = 0; i < section_count; ++i) {
    const std::string name = in.text();
    const std::uint64_t body_bytes = in.u64();
    if (body_bytes > in.left()) in.damaged(fmt::format("section '{}' runs past the end", name));
    if (!seen.insert(name).second) in.damaged(fmt::format("section '{}' appears twice", name));
    const std::uint64_t after_section = in.left() - body_bytes;
    in.set_left(body_bytes);
    if (name == kModelSection) {
      c.model_name = in.text();
      c.model_fingerprint = in.u64();
      c.parameter_count = in.i64();
    } else if (name == kParametersSection) {
      c.parameters = in.tensors();
    } else if (name == kBuffersSection) {
      c.buffers = in.tensors();
    } else if (name == kOptimizerSection) {
      c.optimizer_name = in.text();
      c.optimizer_description = in.text();
      c.optimizer_state = in.tensors();
    } else if (name == kTrainerSection) {
      TrainerState& t = c.trainer;
      t.epoch = in.i64();
      t.step_in_epoch = in.i64();
      t.global_step = in.i64();
      for (std::uint64_t& word : t.rng_state) word = in.u64();
      t.best_metric = in.f64();
      t.best_metric_name = in.text();
      t.config_json = in.text();
      t.progress_json = in.text();
    } else if (name == kExtraSection) {
      c.extra = in.tensors();
    } else {
      in.skip(body_bytes);  // written by a newer telar; not needed to resume
    }
    if (in.left() != 0)
      in.damaged(fmt::format("section '{}' has {} unread bytes", name, in.left()));
    in.set_left(after_section);
  }
  if (in.left() != 0) in.damaged("bytes follow the last section");
  for (std::string_view required :
       {kModelSection, kParametersSection, kBuffersSection, kOptimizerSection, kTrainerSection})
    if (!seen.contains(std::string(required)))
      in.damaged(fmt::format("section '{}' is missing", required));
  return c;
}

Checkpoint capture_checkpoint(const graph::Graph& graph, const graph::ParameterSet& params,
                              const Optimizer* optimizer, const TrainerState& trainer) {
  Checkpoint c;
  c.model_name = graph.name();
  c.model_fingerprint = model_fingerprint(graph);
  c.parameter_count = graph.parameter_count();
  for (graph::ValueId id : graph.parameters()) {
    require(params.has(id), "internal: parameter '{}' has no tensor to save", graph.value(id).name);
    c.parameters.push_back({graph.value(id).name, params.at(id)});
  }
  for (graph::ValueId id : graph.buffers()) {
    require(params.has(id), "internal: buffer '{}' has no tensor to save", graph.value(id).name);
    c.buffers.push_back({graph.value(id).name, params.at(id)});
  }
  if (optimizer) {
    c.optimizer_name = std::string(optimizer->name());
    c.optimizer_description = optimizer->describe();
    c.optimizer_state = optimizer->state(graph);
  }
  c.trainer = trainer;
  return c;
}

void save_checkpoint(const fs::path& path, const graph::Graph& graph,
                     const graph::ParameterSet& params, const Optimizer* optimizer,
                     const TrainerState& trainer) {
  write_checkpoint(path, capture_checkpoint(graph, params, optimizer, trainer));
}

namespace {

// Matches the checkpoint's tensors to the graph's values of one kind, by name; throws on the
// first missing, extra or mismatched one. Returns (value id, tensor) pairs in graph order.
std::vector<std::pair<graph::ValueId, const Tensor*>> match_values(
    const NamedTensors& saved, const std::vector<graph::ValueId>& wanted, std::string_view kind,
    const fs::path& source, const graph::Graph& graph) {
  std::vector<std::pair<graph::ValueId, const Tensor*>> matched;
  std::set<std::string> used;
  for (graph::ValueId id : wanted) {
    const graph::Value& value = graph.value(id);
    const auto it = std::find_if(saved.begin(), saved.end(),
                                 [&](const NamedTensor& t) { return t.name == value.name; });
    if (it == saved.end())
      fail(
          "checkpoint '{}' has no {} '{}', which model {} needs; it belongs to another model, use "
          "the --model options it was written with",
          source.string(), kind, value.name, graph.name());
    if (it->tensor.shape() != value.shape || it->tensor.dtype() != value.dtype)
      fail(
          "{} '{}' is {} {} in checkpoint '{}' but {} {} in model {}; it belongs to another "
          "model, use the --model options it was written with",
          kind, value.name, dtype_name(it->tensor.dtype()), shape_str(it->tensor.shape()),
          source.string(), dtype_name(value.dtype), shape_str(value.shape), graph.name());
    used.insert(value.name);
    matched.emplace_back(id, &it->tensor);
  }
  for (const NamedTensor& t : saved)
    if (!used.contains(t.name))
      fail(
          "checkpoint '{}' has {} '{}', which model {} does not have; it belongs to another "
          "model, use the --model options it was written with",
          source.string(), kind, t.name, graph.name());
  return matched;
}

}  // namespace

TrainerState restore_checkpoint(const Checkpoint& c, const fs::path& source,
                                const graph::Graph& graph, graph::ParameterSet& params,
                                Optimizer* optimizer, RestoreOptions options) {
  const std::uint64_t fingerprint = model_fingerprint(graph);
  if (options.require_same_model && c.model_fingerprint != fingerprint)
    fail(
        "checkpoint '{}' was written for {}; this run builds {}; use the --model options it was "
        "written with, or start a new run",
        source.string(), describe_model(c.model_name, c.parameter_count, c.model_fingerprint),
        describe_model(graph.name(), graph.parameter_count(), fingerprint));
  const auto parameters =
      match_values(c.parameters, graph.parameters(), "parameter", source, graph);
  const auto buffers = match_values(c.buffers, graph.buffers(), "buffer", source, graph);

  if (optimizer && options.restore_optimizer) {
    if (c.optimizer_name.empty())
      fail(
          "checkpoint '{}' holds no optimizer state, so training cannot resume from it exactly; "
          "start a new run",
          source.string());
    if (c.optimizer_name != optimizer->name())
      fail("checkpoint '{}' holds {} optimizer state; this run uses {}; resume with --optimizer {}",
           source.string(), c.optimizer_name, optimizer->name(), c.optimizer_name);
    optimizer->load_state(graph, c.optimizer_state);  // validates before it changes anything
  }
  for (const auto* list : {&parameters, &buffers})
    for (const auto& [id, tensor] : *list) {
      if (params.has(id))
        params.at(id).copy_from(*tensor);
      else
        params.set(id, tensor->clone());
    }
  return c.trainer;
}

TrainerState load_checkpoint(const fs::path& path, const graph::Graph& graph,
                             graph::ParameterSet& params, Optimizer* optimizer,
                             RestoreOptions options) {
  return restore_checkpoint(read_checkpoint(path), path, graph, params, optimizer, options);
}

}  // namespace telar::train
