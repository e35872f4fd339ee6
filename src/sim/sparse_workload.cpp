#include "sim/sparse_workload.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/parse.hpp"
#include "sim/glibc_random.hpp"

namespace telar::sim {

CsrMatrix CsrMatrix::from_dense(const std::vector<float>& dense, int rows, int cols) {
  require(dense.size() == static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols),
          "internal: dense matrix of {} values is not {}x{}", dense.size(), rows, cols);
  CsrMatrix m;
  m.rows = rows;
  m.cols = cols;
  m.row_ptr.assign(1, 0);
  m.row_ptr.reserve(static_cast<std::size_t>(rows) + 1);
  for (int r = 0; r < rows; ++r) {
    const float* row = dense.data() + static_cast<std::size_t>(r) * cols;
    for (int c = 0; c < cols; ++c)
      if (row[c] != 0.0f) {
        m.col.push_back(c);
        m.values.push_back(row[c]);
      }
    m.row_ptr.push_back(static_cast<std::int64_t>(m.col.size()));
  }
  return m;
}

std::vector<float> CsrMatrix::to_dense() const {
  std::vector<float> dense(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols), 0.0f);
  for (int r = 0; r < rows; ++r)
    for (std::int64_t e = row_ptr[r]; e < row_ptr[r + 1]; ++e)
      dense[static_cast<std::size_t>(r) * cols + static_cast<std::size_t>(col[e])] += values[e];
  return dense;
}

CsrMatrix CsrMatrix::transposed() const {
  CsrMatrix t;
  t.rows = cols;
  t.cols = rows;
  t.row_ptr.assign(static_cast<std::size_t>(cols) + 1, 0);
  for (int c : col) ++t.row_ptr[static_cast<std::size_t>(c) + 1];
  for (int c = 0; c < cols; ++c) t.row_ptr[c + 1] += t.row_ptr[c];
  t.col.resize(col.size());
  t.values.resize(values.size());
  std::vector<std::int64_t> next(t.row_ptr.begin(), t.row_ptr.end() - 1);
  for (int r = 0; r < rows; ++r)
    for (std::int64_t e = row_ptr[r]; e < row_ptr[r + 1]; ++e) {
      const std::int64_t at = next[col[e]]++;
      t.col[at] = r;
      t.values[at] = values[e];
    }
  return t;
}

void validate(const CsrMatrix& m, std::string_view what, bool any_order) {
  require(m.rows > 0 && m.cols > 0, "{}: a {}x{} matrix has no elements", what, m.rows, m.cols);
  require(m.row_ptr.size() == static_cast<std::size_t>(m.rows) + 1 && m.row_ptr.front() == 0,
          "{}: row pointer of {} entries for {} rows", what, m.row_ptr.size(), m.rows);
  require(m.col.size() == static_cast<std::size_t>(m.nnz()) && m.values.size() == m.col.size(),
          "{}: {} columns and {} values for {} stored entries", what, m.col.size(), m.values.size(),
          m.nnz());
  for (int r = 0; r < m.rows; ++r) {
    require(m.row_ptr[r] <= m.row_ptr[r + 1], "{}: row pointer decreases at row {}", what, r);
    for (std::int64_t e = m.row_ptr[r]; e < m.row_ptr[r + 1]; ++e) {
      require(m.col[e] >= 0 && m.col[e] < m.cols, "{}: column {} of row {} is outside 0..{}", what,
              m.col[e], r, m.cols - 1);
      require(any_order || e == m.row_ptr[r] || m.col[e] > m.col[e - 1],
              "{}: columns of row {} are not ascending", what, r);
    }
  }
}

std::string_view name(SparseDataflow dataflow) {
  return dataflow == SparseDataflow::MkStaKnStr ? "MK_STA_KN_STR" : "MK_STR_KN_STA";
}

SparseDataflow parse_sparse_dataflow(std::string_view text, std::string_view what) {
  const std::string s = to_upper(text);
  if (s == "MK_STA_KN_STR") return SparseDataflow::MkStaKnStr;
  if (s == "MK_STR_KN_STA") return SparseDataflow::MkStrKnSta;
  fail(
      "{}: unknown dataflow '{}'; use MK_STA_KN_STR (MK stationary) or MK_STR_KN_STA (KN "
      "stationary)",
      what, text);
}

std::string describe(const SparseDenseTile& tile) {
  return fmt::format("T_N={} T_K={}", tile.T_N, tile.T_K);
}

void validate(const SparseDenseOp& op) {
  require(op.M > 0 && op.N > 0 && op.K > 0, "SparseDense: M={}, N={}, K={} must all be positive",
          op.M, op.N, op.K);
  require(op.mk.rows == op.M && op.mk.cols == op.K,
          "SparseDense: the sparse matrix is {}x{}, but M={} and K={}", op.mk.rows, op.mk.cols,
          op.M, op.K);
  validate(op.mk, "SparseDense MK", true);
  require(op.kn.empty() || op.kn.size() == static_cast<std::size_t>(op.K) * op.N,
          "SparseDense: the dense matrix has {} values, expected K*N = {}", op.kn.size(),
          1LL * op.K * op.N);
}

std::string tile_violation(int ms_size, const SparseDenseOp& op, const SparseDenseTile& t) {
  if (t.T_N <= 0 || t.T_K <= 0) return "T_N and T_K must be positive";
  if (1LL * t.T_N * t.T_K > ms_size)
    return fmt::format("T_N*T_K = {} multipliers exceed ms_size={}", 1LL * t.T_N * t.T_K, ms_size);
  if (t.T_N > op.N) return fmt::format("T_N={} exceeds N={}", t.T_N, op.N);
  if (t.T_K == 1 && t.T_N > 1)
    for (int m = 0; m < op.mk.rows; ++m)
      if (op.mk.row_nnz(m) > 1)
        return "T_K=1 makes neurons of one multiplier whose folds meet in one accumulator (STONNE "
               "aborts on this mapping); use T_K >= 2";
  return "";
}

void validate(const SparseGemmOp& op) {
  require(op.M > 0 && op.N > 0 && op.K > 0, "SparseGEMM: M={}, N={}, K={} must all be positive",
          op.M, op.N, op.K);
  require(op.mk.rows == op.M && op.mk.cols == op.K,
          "SparseGEMM: the MK matrix is {}x{}, but M={} and K={}", op.mk.rows, op.mk.cols, op.M,
          op.K);
  require(op.kn_t.rows == op.N && op.kn_t.cols == op.K,
          "SparseGEMM: the KN matrix is {}x{}, but K={} and N={}", op.kn_t.cols, op.kn_t.rows, op.K,
          op.N);
  validate(op.mk, "SparseGEMM MK");
  validate(op.kn_t, "SparseGEMM KN");
}

std::vector<float> reference_output(const SparseDenseOp& op) {
  require(!op.kn.empty(), "internal: SparseDense reference without the dense operand");
  std::vector<float> out(static_cast<std::size_t>(op.M) * op.N, 0.0f);
  for (int m = 0; m < op.M; ++m) {
    float* row = out.data() + static_cast<std::size_t>(m) * op.N;
    for (std::int64_t e = op.mk.row_ptr[m]; e < op.mk.row_ptr[m + 1]; ++e) {
      const float a = op.mk.values[e];
      const float* b = op.kn.data() + static_cast<std::size_t>(op.mk.col[e]) * op.N;
      for (int n = 0; n < op.N; ++n) row[n] += a * b[n];
    }
  }
  return out;
}

std::vector<float> reference_output(const SparseGemmOp& op) {
  std::vector<float> out(static_cast<std::size_t>(op.M) * op.N, 0.0f);
  std::vector<float> dense_row(static_cast<std::size_t>(op.K), 0.0f);
  for (int m = 0; m < op.M; ++m) {
    for (std::int64_t e = op.mk.row_ptr[m]; e < op.mk.row_ptr[m + 1]; ++e)
      dense_row[op.mk.col[e]] = op.mk.values[e];
    for (int n = 0; n < op.N; ++n) {
      float sum = 0.0f;
      for (std::int64_t e = op.kn_t.row_ptr[n]; e < op.kn_t.row_ptr[n + 1]; ++e)
        sum += dense_row[op.kn_t.col[e]] * op.kn_t.values[e];
      out[static_cast<std::size_t>(m) * op.N + n] = sum;
    }
    for (std::int64_t e = op.mk.row_ptr[m]; e < op.mk.row_ptr[m + 1]; ++e)
      dense_row[op.mk.col[e]] = 0.0f;
  }
  return out;
}

std::vector<float> stonne_random_matrix(GlibcRandom& rng, int rows, int cols, int sparsity) {
  std::vector<float> m(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
  for (float& v : m) {
    const int draw = rng.next() % 100;
    v = draw <= sparsity ? 0.0f : static_cast<float>(rng.next() % 10 + 1);
  }
  return m;
}

SparseDenseOp stonne_sparse_dense(int M, int N, int K, int mk_sparsity, std::uint32_t seed) {
  GlibcRandom rng(seed);
  SparseDenseOp op;
  op.M = M, op.N = N, op.K = K;
  op.mk = CsrMatrix::from_dense(stonne_random_matrix(rng, M, K, mk_sparsity), M, K);
  op.kn = stonne_random_matrix(rng, K, N, 0);
  return op;
}

SparseGemmOp stonne_sparse_gemm(int M, int N, int K, int mk_sparsity, int kn_sparsity,
                                SparseDataflow dataflow, std::uint32_t seed) {
  GlibcRandom rng(seed);
  SparseGemmOp op;
  op.M = M, op.N = N, op.K = K;
  op.dataflow = dataflow;
  op.mk = CsrMatrix::from_dense(stonne_random_matrix(rng, M, K, mk_sparsity), M, K);
  op.kn_t = CsrMatrix::from_dense(stonne_random_matrix(rng, K, N, kn_sparsity), K, N).transposed();
  return op;
}

namespace {

std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const std::size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) out.emplace_back(line.substr(start, i - start));
  }
  return out;
}

}  // namespace

CsrMatrix parse_matrix_market(std::string_view text, std::string_view origin) {
  std::size_t pos = 0;
  int line_number = 0;
  auto next_line = [&](std::string_view& line) {
    if (pos >= text.size()) return false;
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = end + 1;
    ++line_number;
    return true;
  };
  std::string_view line;
  require(next_line(line), "{}: empty file; a Matrix Market file starts with %%MatrixMarket",
          origin);
  const std::vector<std::string> header = words(line);
  require(header.size() == 5 && header[0] == "%%MatrixMarket",
          "{}:1: not a Matrix Market header; expected '%%MatrixMarket matrix coordinate real "
          "general'",
          origin);
  require(to_lower(header[1]) == "matrix", "{}:1: object '{}' is not supported; use 'matrix'",
          origin, header[1]);
  require(to_lower(header[2]) == "coordinate",
          "{}:1: format '{}' is not supported; store the sparse matrix as 'coordinate'", origin,
          header[2]);
  const std::string field = to_lower(header[3]);
  require(field == "real" || field == "integer" || field == "pattern",
          "{}:1: field '{}' is not supported; use real, integer or pattern", origin, header[3]);
  require(to_lower(header[4]) == "general",
          "{}:1: symmetry '{}' is not supported; write every entry and use 'general'", origin,
          header[4]);
  // Size line (after comments and blank lines).
  std::vector<std::string> size;
  while (next_line(line)) {
    const std::string_view t = trim(line);
    if (t.empty() || t.front() == '%') continue;
    size = words(t);
    break;
  }
  require(size.size() == 3, "{}:{}: expected the size line 'rows cols entries'", origin,
          line_number);
  const std::string where = fmt::format("{}:{}", origin, line_number);
  const std::int64_t rows = parse_int(size[0], where + ": rows");
  const std::int64_t cols = parse_int(size[1], where + ": columns");
  const std::int64_t entries = parse_int(size[2], where + ": entries");
  // A simulated operand, not a data set: up to 2^24 rows and columns (the row index then takes at
  // most 128 MiB), so that a size line alone cannot make the reader allocate gigabytes.
  require(rows > 0 && cols > 0 && rows <= (1LL << 24) && cols <= (1LL << 24),
          "{}: a {}x{} matrix is not supported (1 to 2^24 rows and columns)", where, rows, cols);
  require(entries >= 0 && entries <= rows * cols, "{}: {} entries do not fit a {}x{} matrix", where,
          entries, rows, cols);
  struct Entry {
    std::int64_t row;
    int col;
    float value;
  };
  std::vector<Entry> listed;  // as the file lists them; grows with the file, not the size line
  while (next_line(line)) {
    const std::string_view t = trim(line);
    if (t.empty() || t.front() == '%') continue;
    const std::vector<std::string> w = words(t);
    const std::string at = fmt::format("{}:{}", origin, line_number);
    const std::size_t expected = field == "pattern" ? 2 : 3;
    require(w.size() == expected, "{}: expected '{}' ({} fields), got {}", at,
            field == "pattern" ? "row col" : "row col value", expected, w.size());
    const std::int64_t r = parse_int(w[0], at + ": row");
    const std::int64_t c = parse_int(w[1], at + ": column");
    require(r >= 1 && r <= rows && c >= 1 && c <= cols,
            "{}: entry ({}, {}) is outside the {}x{} matrix (indices are 1-based)", at, r, c, rows,
            cols);
    float v = 1.0f;
    if (field != "pattern") {
      const double d = field == "integer" ? static_cast<double>(parse_int(w[2], at + ": value"))
                                          : parse_double(w[2], at + ": value");
      require(std::isfinite(d), "{}: value '{}' is not finite", at, w[2]);
      v = static_cast<float>(d);
    }
    listed.push_back({r - 1, static_cast<int>(c - 1), v});
    require(static_cast<std::int64_t>(listed.size()) <= entries,
            "{}: more entries than the {} the size line announces", at, entries);
  }
  require(static_cast<std::int64_t>(listed.size()) == entries,
          "{}: the size line announces {} entries, the file has {}", origin, entries,
          listed.size());
  // By row, then column; repeated entries add up, in the file's order.
  std::stable_sort(listed.begin(), listed.end(), [](const Entry& a, const Entry& b) {
    return a.row != b.row ? a.row < b.row : a.col < b.col;
  });
  CsrMatrix m;
  m.rows = static_cast<int>(rows);
  m.cols = static_cast<int>(cols);
  m.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  for (std::size_t k = 0; k < listed.size(); ++k) {
    const Entry& e = listed[k];
    if (k > 0 && listed[k - 1].row == e.row && listed[k - 1].col == e.col) {
      m.values.back() += e.value;
      continue;
    }
    m.col.push_back(e.col);
    m.values.push_back(e.value);
    ++m.row_ptr[static_cast<std::size_t>(e.row) + 1];
  }
  for (std::size_t r = 1; r < m.row_ptr.size(); ++r) m.row_ptr[r] += m.row_ptr[r - 1];
  return m;
}

CsrMatrix load_matrix_market(const std::filesystem::path& path) {
  return parse_matrix_market(read_file(path), path.string());
}

std::string format_matrix_market(const CsrMatrix& m) {
  std::string out = "%%MatrixMarket matrix coordinate real general\n";
  out += fmt::format("{} {} {}\n", m.rows, m.cols, m.nnz());
  for (int r = 0; r < m.rows; ++r)
    for (std::int64_t e = m.row_ptr[r]; e < m.row_ptr[r + 1]; ++e)
      out += fmt::format("{} {} {}\n", r + 1, m.col[e] + 1, m.values[e]);
  return out;
}

}  // namespace telar::sim
