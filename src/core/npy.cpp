#include "core/npy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <string>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/parse.hpp"

namespace telar {

namespace {

constexpr char kMagic[] = "\x93NUMPY";

// The value of 'key' in the header's Python dict literal, e.g. "'<f4'" or "(2, 3)".
std::string dict_value(const std::string& header, const std::string& key,
                       const std::filesystem::path& file) {
  const std::size_t k = header.find("'" + key + "'");
  require(k != std::string::npos, "{}: the .npy header has no '{}'", file.string(), key);
  std::size_t v = header.find(':', k);
  require(v != std::string::npos, "{}: the .npy header is malformed", file.string());
  ++v;
  while (v < header.size() && header[v] == ' ') ++v;
  const char open = header[v];
  const char close = open == '(' ? ')' : open == '\'' ? '\'' : ',';
  const std::size_t end = header.find(close, v + 1);
  require(end != std::string::npos, "{}: the .npy header is malformed", file.string());
  return header.substr(v, end - v + (close == ',' ? 0 : 1));
}

}  // namespace

Tensor read_npy(const std::filesystem::path& file) {
  std::error_code ec;
  require(std::filesystem::is_regular_file(file, ec), "{}: cannot be read (give a NumPy .npy file)",
          file.string());
  const std::string bytes = read_file(file);
  require(bytes.size() >= 10 && bytes.compare(0, 6, kMagic, 6) == 0,
          "{}: not a NumPy .npy file (save it with numpy.save)", file.string());
  const int major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    require(bytes.size() >= 12, "{}: the .npy file is truncated", file.string());
    for (int b = 0; b < 4; ++b)
      header_len |= static_cast<std::size_t>(static_cast<unsigned char>(bytes[8 + b])) << (8 * b);
    offset = 12;
  } else {
    fail("{}: .npy format version {} is not supported (1 to 3 are)", file.string(), major);
  }
  require(offset + header_len <= bytes.size(), "{}: the .npy file is truncated", file.string());
  const std::string header = bytes.substr(offset, header_len);
  const std::string descr = dict_value(header, "descr", file);
  require(dict_value(header, "fortran_order", file).rfind("False", 0) == 0,
          "{}: the array is in Fortran order; save a C-ordered array "
          "(numpy.ascontiguousarray)",
          file.string());
  const bool f4 = descr == "'<f4'", f8 = descr == "'<f8'";
  require(f4 || f8, "{}: dtype {} is not supported; save float32 (x.astype(numpy.float32))",
          file.string(), descr);
  Shape shape;
  const std::string dims = dict_value(header, "shape", file);
  require(dims.size() >= 2 && dims.front() == '(', "{}: the .npy shape {} is not a tuple",
          file.string(), dims);
  std::int64_t numel = 1;
  for (const std::string& piece : split(dims.substr(1, dims.size() - 2), ',')) {
    const std::string_view part = trim(piece);
    if (part.empty()) continue;
    std::int64_t d = 0;
    for (char c : part) {
      require(c >= '0' && c <= '9', "{}: the .npy shape {} is malformed", file.string(), dims);
      d = d * 10 + (c - '0');
      require(d <= (std::int64_t{1} << 40), "{}: the .npy shape {} is too large", file.string(),
              dims);
    }
    shape.push_back(d);
    require(d == 0 || numel <= (std::int64_t{1} << 40) / d, "{}: the .npy shape {} is too large",
            file.string(), dims);
    numel *= d;
  }
  const std::size_t data = offset + header_len;
  const std::size_t width = f4 ? 4 : 8;
  require(bytes.size() - data == static_cast<std::size_t>(numel) * width,
          "{}: the .npy data has {} bytes; shape {} of {} needs {}", file.string(),
          bytes.size() - data, shape_str(shape), f4 ? "float32" : "float64", numel * width);
  Tensor t(shape);
  float* out = t.f32();
  if (f4) {
    std::memcpy(out, bytes.data() + data, static_cast<std::size_t>(numel) * 4);
  } else {
    for (std::int64_t k = 0; k < numel; ++k) {
      double v;
      std::memcpy(&v, bytes.data() + data + 8 * k, 8);
      out[k] = static_cast<float>(v);
    }
  }
  return t;
}

void write_npy(const std::filesystem::path& file, const Tensor& t) {
  require(t.dtype() == DType::F32, "write_npy: {} holds {}, not float32", file.string(),
          dtype_name(t.dtype()));
  std::string dims = fmt::format("{}", fmt::join(t.shape(), ", "));
  if (t.rank() == 1) dims += ',';  // Python's one-element tuple: (3,)
  std::string header =
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}), }}", dims);
  // Magic, version, length, then the header padded with spaces to a multiple of 64, ending '\n'.
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, 6);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(static_cast<const char*>(t.raw()), t.nbytes());
  write_file_atomic(file, out);
}

}  // namespace telar
