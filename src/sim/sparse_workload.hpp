#pragma once
// Sparse operations in STONNE's two sparse controllers:
//  * MAGMA_SPARSE_DENSE (-SparseDense): a CSR sparse M×K matrix times a dense K×N matrix, tiled
//    by T_N output columns and T_K non-zeros of a row at a time, with the accumulation buffer;
//  * SIGMA_SPARSE_GEMM (-SparseGEMM): both operands bitmap-compressed (MK by rows, KN by
//    columns); one is stationary (packed into variable-size clusters of multipliers), the other
//    is streamed. Dataflows MK_STA_KN_STR and MK_STR_KN_STA.
// Matrices are kept in CSR form; a stored entry is a non-zero of the pattern (a bitmap bit).
// Also: STONNE's random sparse matrices (glibc rand(), as its command line draws them) and
// Matrix Market (.mtx) files.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace telar::sim {

struct CsrMatrix {
  int rows = 0, cols = 0;
  std::vector<std::int64_t> row_ptr{0};  // rows + 1 entries
  std::vector<int> col;                  // column of each stored entry, ascending within a row
  std::vector<float> values;             // one per stored entry

  std::int64_t nnz() const { return row_ptr.empty() ? 0 : row_ptr.back(); }
  std::int64_t row_nnz(int r) const { return row_ptr[r + 1] - row_ptr[r]; }
  // Entries that are not zero become the pattern.
  static CsrMatrix from_dense(const std::vector<float>& dense, int rows, int cols);
  std::vector<float> to_dense() const;
  CsrMatrix transposed() const;
  bool operator==(const CsrMatrix&) const = default;
};
// Checks the structure (sizes, in-range columns, ascending within a row unless `any_order`:
// CSR sparse x dense takes a row's columns in any order, repeats included, as an
// EmbeddingBag's indices come); throws telar::Error naming `what`.
void validate(const CsrMatrix& m, std::string_view what, bool any_order = false);

enum class SparseDataflow { MkStaKnStr, MkStrKnSta };
std::string_view name(SparseDataflow dataflow);  // "MK_STA_KN_STR", "MK_STR_KN_STA"
SparseDataflow parse_sparse_dataflow(std::string_view text, std::string_view what);

// MAGMA_SPARSE_DENSE: output M×N = MK (CSR, M×K) · KN (dense K×N, row-major). The dense
// operand's values are optional: without them the simulation gives timing and traffic only.
struct SparseDenseOp {
  std::string layer_name = "SparseDenseTestLayer";
  int M = 0, N = 0, K = 0;
  CsrMatrix mk;
  std::vector<float> kn;  // K×N, or empty
};
struct SparseDenseTile {
  int T_N = 4, T_K = 8;  // output columns and non-zeros of a row mapped at once
  bool operator==(const SparseDenseTile&) const = default;
};
std::string describe(const SparseDenseTile& tile);  // "T_N=4 T_K=8"
void validate(const SparseDenseOp& op);
// T_N·T_K multipliers must fit the array (STONNE maps T_N neurons of T_K multipliers).
std::string tile_violation(int ms_size, const SparseDenseOp& op, const SparseDenseTile& tile);

// SIGMA_SPARSE_GEMM: output M×N = MK (M×K) · KN (K×N). `kn_t` is KN by columns (N×K, the
// layout of SIGMA's KN bitmap), so both operands are rows over K.
struct SparseGemmOp {
  std::string layer_name = "GEMMTestLayer";
  int M = 0, N = 0, K = 0;
  SparseDataflow dataflow = SparseDataflow::MkStaKnStr;
  CsrMatrix mk;    // M×K
  CsrMatrix kn_t;  // N×K
};
void validate(const SparseGemmOp& op);

// Reference products (the oracle for the simulated outputs): M×N, row-major.
std::vector<float> reference_output(const SparseDenseOp& op);
std::vector<float> reference_output(const SparseGemmOp& op);

// STONNE's command-line matrices: for each element in row-major order, r = rand() % 100; the
// element is 0 when r <= sparsity, else rand() % 10 + 1. (So sparsity 99 gives an empty matrix
// and 0 still zeroes about 1% of the elements.)
class GlibcRandom;
std::vector<float> stonne_random_matrix(GlibcRandom& rng, int rows, int cols, int sparsity);
// The operands `stonne -SparseDense` / `-SparseGEMM` draw (MK first, then KN) from srand(seed).
SparseDenseOp stonne_sparse_dense(int M, int N, int K, int mk_sparsity, std::uint32_t seed = 1);
SparseGemmOp stonne_sparse_gemm(int M, int N, int K, int mk_sparsity, int kn_sparsity,
                                SparseDataflow dataflow, std::uint32_t seed = 1);

// Matrix Market: "%%MatrixMarket matrix coordinate real|integer|pattern general", comment lines
// starting with '%', a size line "rows cols entries", then one "row col [value]" line per entry
// (1-based). Pattern entries are 1. Repeated entries are added together. Errors name the file
// and line.
CsrMatrix parse_matrix_market(std::string_view text, std::string_view origin);
CsrMatrix load_matrix_market(const std::filesystem::path& path);
std::string format_matrix_market(const CsrMatrix& m);  // coordinate real general

}  // namespace telar::sim
